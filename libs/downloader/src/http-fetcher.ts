import type { LookupFunction } from 'node:net';
import { Agent, request } from 'undici';

export interface FetcherSettings {
  userAgent: string;
  connectTimeoutMs: number;
  headersTimeoutMs: number;
  bodyTimeoutMs: number;
  totalTimeoutMs: number;
}

export interface FetchResponse {
  status: number;
  headers: Record<string, string>;
  contentType: string;
  /** Null when the body was not wanted (wrong type, error status) and was discarded unread. */
  body: Buffer | null;
  truncated: boolean;
  durationMs: number;
}

export interface FetchOptions {
  /** The address the resolver vetted: the connection goes there and nowhere else. */
  address: string;
  maxBytes: number;
  /** Decides from the status and headers whether the body is worth reading. */
  wantBody: (status: number, contentType: string) => boolean;
  /** Extra request headers (conditional requests). */
  headers?: Record<string, string>;
}

/**
 * GET over undici keep-alive pools, connecting only to the vetted address: the agent's lookup answers from
 * the pins set for the request in progress, so a name can never resolve to something unvetted (no DNS
 * rebinding). Redirects are never followed here.
 */
export class HttpFetcher {
  /** hostname → vetted address and the number of requests in progress that rely on it. */
  private readonly pins = new Map<string, { address: string; users: number }>();
  private readonly agent: Agent;

  constructor(private readonly settings: FetcherSettings) {
    const lookup: LookupFunction = (hostname, options, callback) => {
      const address = this.pins.get(hostname.toLowerCase())?.address;
      if (!address) return callback(new Error(`no vetted address for ${hostname}`), '', 0);
      const family = address.includes(':') ? 6 : 4;
      if (options.all) return (callback as any)(null, [{ address, family }]);
      callback(null, address, family);
    };
    this.agent = new Agent({
      connect: { lookup, timeout: settings.connectTimeoutMs },
      headersTimeout: settings.headersTimeoutMs,
      bodyTimeout: settings.bodyTimeoutMs,
      keepAliveTimeout: 10_000,
      connections: 4,
    });
  }

  async get(url: string, options: FetchOptions): Promise<FetchResponse> {
    const hostname = new URL(url).hostname.replace(/^\[|\]$/g, '').toLowerCase();
    this.pin(hostname, options.address);
    const started = performance.now();
    try {
      const response = await request(url, {
        dispatcher: this.agent,
        method: 'GET',
        headers: {
          ...options.headers,
          'user-agent': this.settings.userAgent,
          accept: 'text/html,application/xhtml+xml;q=0.9,*/*;q=0.5',
          'accept-encoding': 'identity',
        },
        signal: AbortSignal.timeout(this.settings.totalTimeoutMs),
      });
      const headers = flattenHeaders(response.headers);
      const contentType = headers['content-type'] ?? '';
      if (!options.wantBody(response.statusCode, contentType)) {
        await response.body.dump().catch(() => undefined);
        return { status: response.statusCode, headers, contentType, body: null, truncated: false, durationMs: since(started) };
      }
      const chunks: Buffer[] = [];
      let length = 0;
      let truncated = false;
      for await (const chunk of response.body) {
        if (length + chunk.length > options.maxBytes) {
          chunks.push(chunk.subarray(0, options.maxBytes - length));
          length = options.maxBytes;
          truncated = true;
          response.body.destroy();
          break;
        }
        chunks.push(chunk);
        length += chunk.length;
      }
      return { status: response.statusCode, headers, contentType, body: Buffer.concat(chunks, length), truncated, durationMs: since(started) };
    } finally {
      this.unpin(hostname);
    }
  }

  /**
   * Requests to one name overlap (two ports of one host are two politeness keys; undici may queue or
   * reconnect): the pin lives while any of them does. The newest vetted address wins.
   */
  private pin(hostname: string, address: string) {
    const pin = this.pins.get(hostname);
    this.pins.set(hostname, { address, users: (pin?.users ?? 0) + 1 });
  }

  private unpin(hostname: string) {
    const pin = this.pins.get(hostname);
    if (pin && --pin.users === 0) this.pins.delete(hostname);
  }

  close(): Promise<void> {
    return this.agent.close();
  }
}

function flattenHeaders(headers: Record<string, string | string[] | undefined>): Record<string, string> {
  const flat: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined) flat[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : value;
  }
  return flat;
}

const since = (start: number) => Math.round(performance.now() - start);
