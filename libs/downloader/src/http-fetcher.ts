import type { LookupFunction } from 'node:net';
import { pipeline, Readable, Transform, TransformCallback } from 'node:stream';
import zlib from 'node:zlib';
import { Agent, buildConnector, request } from 'undici';
import { DIRECT, FetchRoute } from './fetch-routes';
import { FetchErrorCode, HttpFetchError } from './http-errors';
import { openTunnel } from './proxy-tunnel';
import { TransferRateGuard } from './transfer-rate';

// The fetcher's error vocabulary travels with it (and out through the library's index).
export { classifyFetchError, FetchErrorCode, HttpFetchError, type FetchErrorKind } from './http-errors';

export interface FetcherSettings {
  userAgent: string;
  connectTimeoutMs: number;
  headersTimeoutMs: number;
  /** Longest silence allowed between two pieces of the body. */
  bodyTimeoutMs: number;
  /** The whole request, connect to last byte: a body that trickles in forever is cut off by this. */
  totalTimeoutMs: number;
  /** A body averaging fewer bytes a second than this over a window is cut off (`timeout-rate`); 0 = no minimum. @defaultValue 0 */
  minBytesPerSecond?: number;
  /** The window of that average, from the headers on. @defaultValue 10000 */
  minRateWindowMs?: number;
  /** Largest response head (status line and headers) accepted, in bytes; larger fails the request. @defaultValue 16384 */
  maxHeaderBytes?: number;
  /**
   * Addresses one fetch tries at most, the first included: a connection to one that fails (refused, unreachable,
   * connect timeout) moves on to the next of `FetchOptions.fallbacks`. @defaultValue 3
   */
  maxAddressTries?: number;
  /** Whether a body not wanted is read anyway (under the same limit), for the WARC archive: an error page, a redirect's. @defaultValue never */
  readUnwanted?: (status: number) => boolean;
  /**
   * Connections kept per origin at most: as many requests to one host as the frontier may have in flight, or
   * those beyond wait in the pool while their timeouts run. @defaultValue 4
   */
  connectionsPerOrigin?: number;
}

export interface FetchResponse {
  status: number;
  headers: Record<string, string>;
  contentType: string;
  /**
   * Null when the body was not wanted (wrong type, error status) and was discarded unread. Always decoded:
   * `headers['content-encoding']` and `headers['content-length']` still describe the bytes on the wire.
   */
  body: Buffer | null;
  /** The body stopped at `maxBytes` (decoded), or the encoded bytes read reached `maxBytes`. */
  truncated: boolean;
  durationMs: number;
  /** The content coding(s) the server applied, lower-case and outermost last (`gzip`, `br`, `deflate, gzip`); absent for none. */
  encoding?: string;
  /** When the body was decoded: how many encoded bytes were read off the wire to produce it. */
  decodedFrom?: number;
  /** When the request was sent, ISO 8601. */
  requestedAt: string;
  /** The request headers as given to the HTTP client (it adds `host` and `connection` on the wire). */
  requestHeaders: Record<string, string>;
  /** A body not wanted but read all the same for the archive (`FetcherSettings.readUnwanted`), under the same limit. */
  unwantedBody?: Buffer;
  /** Each `Set-Cookie` header on its own: joined into `headers` they could not be told apart (an Expires date holds a comma). */
  setCookies: string[];
  /** The address the response came from: `FetchOptions.address`, or a fallback when connecting to it failed. */
  address: string;
}

/** A connection to one address that failed, and the address tried next. */
export interface AddressFailover {
  from: string;
  to: string;
  error: unknown;
}

export interface FetchOptions {
  /** The address the resolver vetted: the connection goes there first. */
  address: string;
  /**
   * The name's other vetted addresses, tried in order when connecting fails (at most `maxAddressTries` addresses
   * in all); never through a proxy, whose own failures say nothing of the site's addresses.
   */
  fallbacks?: string[];
  /** Told of each move to the next address, before it is tried. */
  onFailover?: (failover: AddressFailover) => void | Promise<void>;
  /** Most bytes of body kept, after decoding; also the most encoded bytes read. */
  maxBytes: number;
  /** A limit of its own for a body of this Content-Type (a plugin's), instead of `maxBytes`; undefined keeps `maxBytes`. */
  maxBytesFor?: (contentType: string) => number | undefined;
  /** Decides from the status and headers whether the body is worth reading. */
  wantBody: (status: number, contentType: string) => boolean;
  /** Extra request headers (a site's own, conditional requests). */
  headers?: Record<string, string>;
  /** The User-Agent of this request (a site's own), instead of the crawler's. */
  userAgent?: string;
  /** Through which proxy, with which TLS checks (the site's); absent = straight there, the default checks. */
  route?: FetchRoute;
}

/** Where a request may connect: the vetted address, the name's other vetted ones, and who hears of a move. */
export type AddressTarget = Pick<FetchOptions, 'address' | 'fallbacks' | 'onFailover'>;

/** What the fetcher asks for and can decode. */
export const ACCEPT_ENCODING = 'gzip, deflate, br';
/** An unwanted body is read off (to keep the connection) when it is this short and quick; else the connection is closed. */
const DUMP_MAX_BYTES = 64 * 1024;
const DUMP_MAX_MS = 1000;
/** Names whose fallback address the fetcher remembers, at most (the least recently preferred go first). */
const MAX_PREFERRED = 10_000;
/** Content codings applied one over the other that the fetcher will undo, at most. */
const MAX_CODINGS = 3;

/**
 * GET over undici keep-alive pools, connecting only to the vetted address: the agent's lookup answers from
 * the pins set for the request in progress, so a name can never resolve to something unvetted (no DNS
 * rebinding); through a proxy, the tunnel is asked for that address, never the name (see connector).
 * Redirects are never followed here. Bodies are decoded (gzip, deflate, br) with the size limit applied to
 * the decoded bytes, so a compression bomb stops at `maxBytes` like any long body. Every failure
 * is a rejected promise whose error has a `code` (undici's `UND_ERR_*`, llhttp's `HPE_*`, Node's errno, or
 * the fetcher's own `ERR_FETCH_*`); `classifyFetchError` turns it into a kind for metrics.
 */
export class HttpFetcher {
  /** hostname → vetted address and the number of requests in progress that rely on it. */
  private readonly pins = new Map<string, { address: string; users: number }>();
  /**
   * hostname → the fallback address that answered when its first one could not be reached: later fetches of the
   * name start there while it is among their vetted addresses, so that the connections kept alive for the name
   * all go to one address, the one reported. Forgotten when it fails in turn; the oldest go past MAX_PREFERRED.
   */
  private readonly preferred = new Map<string, string>();
  /** A pool per route: a site's proxy or TLS options never serve another site's requests. */
  private readonly agents = new Map<FetchRoute, Agent>();
  private readonly lookup: LookupFunction;

  constructor(private readonly settings: FetcherSettings) {
    this.lookup = (hostname, options, callback) => {
      const address = this.vetted(hostname);
      if (!address) return callback(new HttpFetchError(`no vetted address for ${hostname}`, FetchErrorCode.Unvetted) as NodeJS.ErrnoException, '', 0);
      const family = address.includes(':') ? 6 : 4;
      if (options.all) return (callback as unknown as (error: null, addresses: { address: string; family: number }[]) => void)(null, [{ address, family }]);
      callback(null, address, family);
    };
  }

  private vetted(hostname: string): string | undefined {
    return this.pins.get(hostname.replace(/^\[|\]$/g, '').toLowerCase())?.address;
  }

  /** The route's pool, made on first use. */
  private agentFor(route: FetchRoute): Agent {
    let agent = this.agents.get(route);
    if (!agent) {
      agent = new Agent({
        connect: this.connector(route),
        headersTimeout: this.settings.headersTimeoutMs,
        bodyTimeout: this.settings.bodyTimeoutMs,
        maxHeaderSize: this.settings.maxHeaderBytes ?? 16_384,
        keepAliveTimeout: 10_000,
        connections: this.settings.connectionsPerOrigin ?? 4,
      });
      this.agents.set(route, agent);
    }
    return agent;
  }

  /**
   * How a route's connections are opened. Straight: to the vetted address (the lookup answers from the pins).
   * Through a proxy: a CONNECT tunnel to the vetted address, then TLS over it for https, checked against the
   * site's name as if straight there. Either way the site's TLS options apply to the site, never to the proxy.
   */
  private connector(route: FetchRoute): buildConnector.connector {
    const timeout = this.settings.connectTimeoutMs;
    const tls = route.tls ?? {};
    const direct = buildConnector({ lookup: this.lookup, timeout, ...tls } as buildConnector.BuildOptions);
    const proxy = route.proxy;
    if (!proxy) return direct;
    return (options, callback) => {
      const address = this.vetted(options.hostname);
      if (!address) return callback(new HttpFetchError(`no vetted address for ${options.hostname}`, FetchErrorCode.Unvetted), null);
      const port = Number(options.port) || (options.protocol === 'https:' ? 443 : 80);
      openTunnel(proxy, address, port, timeout).then(
        (socket) => (options.protocol === 'https:' ? direct({ ...options, httpSocket: socket }, callback) : callback(null, socket)),
        (error: Error) => callback(error, null),
      );
    };
  }

  /**
   * The response from the first of the vetted addresses that accepts a connection. Only a failure to connect moves
   * on (refused, unreachable, connect timeout): an answer, a TLS failure or a reset after connecting is the
   * site's. All the tries share the total timeout.
   */
  async get(url: string, options: FetchOptions): Promise<FetchResponse> {
    const hostname = new URL(url).hostname.replace(/^\[|\]$/g, '').toLowerCase();
    const started = performance.now();
    const signal = AbortSignal.timeout(this.settings.totalTimeoutMs);
    const fallbacks = options.route?.proxy ? [] : (options.fallbacks ?? []);
    const vetted = [...new Set([options.address, ...fallbacks])];
    const preferred = this.preferred.get(hostname);
    const ordered = preferred !== undefined && vetted.includes(preferred) ? [preferred, ...vetted.filter((address) => address !== preferred)] : vetted;
    const addresses = ordered.slice(0, Math.max(1, this.settings.maxAddressTries ?? 3));
    for (let i = 0; ; i++) {
      try {
        const response = await this.attempt(url, hostname, addresses[i], options, signal, started);
        if (response.address !== options.address) this.prefer(hostname, response.address);
        return response;
      } catch (error) {
        if (i + 1 >= addresses.length || signal.aborted || !isConnectFailure(error)) throw error;
        if (this.preferred.get(hostname) === addresses[i]) this.preferred.delete(hostname);
        await options.onFailover?.({ from: addresses[i], to: addresses[i + 1], error });
      }
    }
  }

  private prefer(hostname: string, address: string): void {
    this.preferred.delete(hostname);
    this.preferred.set(hostname, address);
    if (this.preferred.size > MAX_PREFERRED) this.preferred.delete(this.preferred.keys().next().value!);
  }

  private async attempt(url: string, hostname: string, address: string, options: FetchOptions, signal: AbortSignal, started: number): Promise<FetchResponse> {
    this.pin(hostname, address);
    const requestedAt = new Date().toISOString();
    const requestHeaders = {
      ...options.headers,
      'user-agent': options.userAgent ?? this.settings.userAgent,
      accept: 'text/html,application/xhtml+xml;q=0.9,*/*;q=0.5',
      'accept-encoding': ACCEPT_ENCODING,
    };
    try {
      const response = await request(url, { dispatcher: this.agentFor(options.route ?? DIRECT), method: 'GET', headers: requestHeaders, signal });
      const body = response.body as unknown as Readable & { dump(options?: { limit?: number; signal?: AbortSignal }): Promise<void> };
      // Readers see the body's errors; this keeps one raised after they stopped listening (undici turns our
      // own destroy() of an unfinished body into an 'error') from becoming an uncaught exception.
      body.on('error', () => undefined);
      try {
        const headers = flattenHeaders(response.headers);
        const contentType = headers['content-type'] ?? '';
        const codings = parseCodings(headers['content-encoding']);
        const setCookie = response.headers['set-cookie'];
        const setCookies = setCookie === undefined ? [] : Array.isArray(setCookie) ? setCookie : [setCookie];
        const head = {
          address,
          status: response.statusCode,
          headers,
          contentType,
          requestedAt,
          requestHeaders,
          setCookies,
          ...(codings.length ? { encoding: codings.join(', ') } : {}),
        };
        const wanted = options.wantBody(response.statusCode, contentType);
        if (!wanted && !this.settings.readUnwanted?.(response.statusCode)) {
          // A short unwanted body is read off so that the connection can be reused; a long or slow one
          // closes it instead (a drip must not hold this fetch until the total timeout).
          await body.dump({ limit: DUMP_MAX_BYTES, signal: AbortSignal.timeout(Math.min(DUMP_MAX_MS, this.settings.totalTimeoutMs)) }).catch(() => undefined);
          return { ...head, body: null, truncated: false, durationMs: since(started) };
        }
        const maxBytes = options.maxBytesFor?.(contentType) ?? options.maxBytes;
        const guard = new TransferRateGuard(body, { bytesPerSecond: this.settings.minBytesPerSecond ?? 0, windowMs: this.settings.minRateWindowMs ?? 10_000 });
        try {
          const reading = codings.length ? readDecoded(body, codings, maxBytes, guard) : readPlain(body, maxBytes, guard);
          if (!wanted) {
            // The answer is the status: a body read only for the archive that fails to arrive is left out, it
            // does not make the request a failure.
            const read = await reading.catch(() => undefined);
            return { ...head, body: null, truncated: read?.truncated ?? false, unwantedBody: read?.body ?? undefined, durationMs: since(started) };
          }
          return { ...head, ...(await reading), durationMs: since(started) };
        } finally {
          guard.stop();
        }
      } finally {
        // Whatever happened, nothing more is read: an unfinished body closes its connection.
        if (!body.readableEnded) body.destroy();
      }
    } catch (error) {
      // Once the total timeout has fired, whatever undici or the decoder threw is its consequence.
      if (signal.aborted && !(error instanceof HttpFetchError)) {
        throw new HttpFetchError(`no complete response within ${this.settings.totalTimeoutMs} ms`, FetchErrorCode.TotalTimeout, {
          cause: error,
          name: 'TimeoutError',
        });
      }
      // undici's parser errors come without their llhttp code (undici 7 looks it up the wrong way round).
      const parserError = error as { name?: unknown; code?: string } | null;
      if (parserError && typeof parserError === 'object' && parserError.name === 'HTTPParserError' && !parserError.code) {
        parserError.code = 'UND_ERR_HTTP_PARSER';
      }
      throw error;
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

  async close(): Promise<void> {
    await Promise.all([...this.agents.values()].map((agent) => agent.close()));
  }
}

/** Errors of a connection that was never made (errno or undici codes): another address of the name may answer. */
const CONNECT_FAILURES = new Set(['ECONNREFUSED', 'EHOSTUNREACH', 'ENETUNREACH', 'EADDRNOTAVAIL', 'ETIMEDOUT', 'UND_ERR_CONNECT_TIMEOUT']);

function isConnectFailure(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && CONNECT_FAILURES.has(code);
}

type BodyRead = Pick<FetchResponse, 'body' | 'truncated' | 'decodedFrom'>;

/** Reads at most maxBytes, then stops reading (the caller closes the connection). */
async function readPlain(body: Readable, maxBytes: number, guard: TransferRateGuard): Promise<BodyRead> {
  const chunks: Buffer[] = [];
  let length = 0;
  for await (const chunk of body as AsyncIterable<Buffer>) {
    guard.count(chunk.length);
    if (length + chunk.length > maxBytes) {
      chunks.push(chunk.subarray(0, maxBytes - length));
      return { body: Buffer.concat(chunks, maxBytes), truncated: true };
    }
    chunks.push(chunk);
    length += chunk.length;
  }
  return { body: Buffer.concat(chunks, length), truncated: false };
}

/**
 * Undoes the content codings (last applied, first undone) as the bytes arrive. Two limits, both maxBytes:
 * the decoded output (a bomb stops as soon as it passes it) and the encoded input read (a body that decodes
 * to little but never ends). Decoders are lenient about a stream cut short (what was decoded is kept), strict
 * about bytes that are not their format.
 */
async function readDecoded(body: Readable, codings: string[], maxBytes: number, guard: TransferRateGuard): Promise<BodyRead> {
  if (codings.length > MAX_CODINGS) {
    throw new HttpFetchError(`too many content-encodings (${codings.join(', ')})`, FetchErrorCode.UnsupportedEncoding);
  }
  const unsupported = codings.find((coding) => !(coding in DECODERS));
  if (unsupported) throw new HttpFetchError(`unsupported content-encoding "${unsupported}"`, FetchErrorCode.UnsupportedEncoding);

  let encodedBytes = 0;
  let truncated = false;
  /** Errors of the response itself (timeouts, resets): passed on as they are, not as decoding failures. */
  const wireErrors = new WeakSet<object>();
  async function* encoded(): AsyncGenerator<Buffer> {
    try {
      for await (const chunk of body as AsyncIterable<Buffer>) {
        guard.count(chunk.length);
        const room = maxBytes - encodedBytes;
        if (chunk.length > room) {
          encodedBytes = maxBytes;
          truncated = true;
          if (room > 0) yield chunk.subarray(0, room);
          return;
        }
        encodedBytes += chunk.length;
        yield chunk;
      }
    } catch (error) {
      if (error && typeof error === 'object') wireErrors.add(error);
      throw error;
    }
  }

  let failure: { coding: string; error: unknown } | undefined;
  const stages = [...codings].reverse().map((coding) => {
    const stage = DECODERS[coding]();
    // Always listened to: a stage torn down after the pipeline settled must not raise an unhandled 'error'.
    stage.on('error', (error) => {
      if (!failure && !(error && typeof error === 'object' && wireErrors.has(error))) failure = { coding, error };
    });
    return stage;
  });
  const output = (pipeline as (...streams: unknown[]) => Readable)(encoded(), ...stages, () => undefined);

  const chunks: Buffer[] = [];
  let length = 0;
  try {
    for await (const chunk of output as AsyncIterable<Buffer>) {
      if (length + chunk.length > maxBytes) {
        chunks.push(chunk.subarray(0, maxBytes - length));
        length = maxBytes;
        truncated = true;
        break;
      }
      chunks.push(chunk);
      length += chunk.length;
    }
  } catch (error) {
    if (error && typeof error === 'object' && wireErrors.has(error)) throw error;
    const coding = failure?.coding ?? codings.join(', ');
    const reason = (failure?.error as Error | undefined)?.message ?? (error as Error)?.message ?? String(error);
    throw new HttpFetchError(`invalid ${coding} data: ${reason}`, FetchErrorCode.Decoding, { cause: failure?.error ?? error });
  } finally {
    output.destroy();
    stages.forEach((stage) => stage.destroy());
  }
  return { body: Buffer.concat(chunks, length), truncated, decodedFrom: encodedBytes };
}

const { Z_SYNC_FLUSH, BROTLI_OPERATION_FLUSH } = zlib.constants;
const DECODERS: Record<string, () => Transform> = {
  gzip: () => zlib.createGunzip({ finishFlush: Z_SYNC_FLUSH }),
  deflate: () => new InflateEither(),
  br: () => zlib.createBrotliDecompress({ finishFlush: BROTLI_OPERATION_FLUSH }),
};

/** `Content-Encoding` as a list of codings in the order applied; `x-gzip` is gzip, `identity` is nothing. */
function parseCodings(header: string | undefined): string[] {
  if (!header) return [];
  return header
    .split(',')
    .map((coding) => coding.trim().toLowerCase())
    .filter((coding) => coding && coding !== 'identity')
    .map((coding) => (coding === 'x-gzip' ? 'gzip' : coding));
}

/**
 * HTTP's "deflate" is a zlib stream (RFC 9110 §8.4.1.2), but some servers send raw deflate: the first two
 * bytes tell (a zlib header names method 8 and is a multiple of 31), and the matching inflater is used.
 * Its output is paused while this stream's reader is full, so a bomb is decoded no faster than it is read.
 */
class InflateEither extends Transform {
  private inner: zlib.Inflate | zlib.InflateRaw | undefined;
  private head: Buffer = Buffer.alloc(0);

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback) {
    if (this.inner) return void this.inner.write(chunk, () => done());
    this.head = Buffer.concat([this.head, chunk]);
    if (this.head.length < 2) return done();
    this.start().write(this.head, () => done());
  }

  override _flush(done: TransformCallback) {
    if (!this.inner) {
      if (!this.head.length) return done();
      this.start().write(this.head);
    }
    this.inner!.once('end', () => done());
    this.inner!.end();
  }

  override _read(size: number) {
    this.inner?.resume();
    super._read(size);
  }

  override _destroy(error: Error | null, done: (error: Error | null) => void) {
    this.inner?.destroy();
    done(error);
  }

  private start() {
    const [cmf, flg] = this.head;
    const zlibWrapped = (cmf & 0x0f) === 8 && cmf >> 4 <= 7 && flg !== undefined && ((cmf << 8) | flg) % 31 === 0;
    const inner = zlibWrapped ? zlib.createInflate({ finishFlush: Z_SYNC_FLUSH }) : zlib.createInflateRaw({ finishFlush: Z_SYNC_FLUSH });
    inner.on('data', (data: Buffer) => {
      if (!this.push(data)) inner.pause();
    });
    inner.on('error', (error) => this.destroy(error));
    this.inner = inner;
    return inner;
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
