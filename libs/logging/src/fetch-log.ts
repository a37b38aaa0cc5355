import { createWriteStream, mkdirSync, WriteStream } from 'node:fs';
import { dirname } from 'node:path';
import type { Logger } from 'pino';

/** One line of the fetch log: what a site owner needs to answer "what did your crawler do on my site". */
export interface FetchLogEntry {
  time: string;
  url: string;
  status: number | null;
  contentType: string | null;
  /** Body bytes kept (decoded), at most the limit it was read with. */
  length: number | null;
  /** The body was longer than its limit (or its decoding was cut off): `length` is what was kept. */
  truncated?: true;
  location: string | null;
  durationMs: number;
  /** Links followed from a seed to reach the URL. */
  depth?: number;
  error?: string;
  /** Anticipated failures by kind: timeout-connect, timeout-headers, timeout-total, timeout-rate, refused, reset, dns, tls, protocol, decode… */
  errorKind?: string;
  robots?: boolean;
  /** The address the request went to (the one connected to: a fallback when connecting to the first failed). */
  address?: string;
}

/** Writes every fetch to the structured log and, when configured, to a JSONL file. */
export class FetchLog {
  private readonly file?: WriteStream;

  constructor(
    private readonly logger: Logger,
    filePath?: string,
  ) {
    if (filePath) {
      mkdirSync(dirname(filePath), { recursive: true });
      this.file = createWriteStream(filePath, { flags: 'a' });
    }
  }

  record(entry: FetchLogEntry): void {
    // The log line has its own `time` (when it was written); the request's start goes as `startedAt`.
    const { time, ...rest } = entry;
    this.logger.info({ event: 'fetch', startedAt: time, ...rest });
    this.file?.write(`${JSON.stringify(entry)}\n`);
  }

  /**
   * A downloaded robots.txt, with its content, so that the decision can be explained later. `redirects`: the
   * robots.txt URLs that redirected to this one, in order (the rules apply to the first one's site).
   */
  robots(url: string, status: number | null, body: string | null, error?: string, redirects?: string[]): void {
    this.logger.info({ event: 'robots', url, status, body, error, ...(redirects?.length ? { redirects } : {}) });
  }

  async close(): Promise<void> {
    const file = this.file;
    if (file) await new Promise<void>((resolve) => file.end(resolve));
  }
}
