import http from 'node:http';
import { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import { classifyFetchError, HttpFetcher } from './http-fetcher';

/**
 * The minimum transfer rate, against a real local server that sends its headers at once and then its body a
 * byte at a time: the fetch is cut when the first window ends, not when the total timeout does.
 */
describe('HttpFetcher minimum transfer rate', () => {
  let server: http.Server;
  let port: number;
  const fetchers: HttpFetcher[] = [];
  /** Every `everyMs`, `bytes` more bytes of a body of `total`; `encoding` gzip sends a gzipped page that way. */
  const trickle = (res: http.ServerResponse, { everyMs, bytes, total, gzip }: { everyMs: number; bytes: number; total: number; gzip?: boolean }) => {
    const body = gzip ? gzipSync(Buffer.from('<p>slow</p>'.repeat(total))) : Buffer.alloc(total, 'a');
    res.writeHead(200, { 'content-type': 'text/html', 'content-length': body.length, ...(gzip ? { 'content-encoding': 'gzip' } : {}) });
    // Node holds the head until the first write, a whole `everyMs` later: as long as the headers timeout.
    res.flushHeaders();
    let sent = 0;
    const timer = setInterval(() => {
      res.write(body.subarray(sent, sent + bytes));
      sent += bytes;
      if (sent >= body.length) {
        clearInterval(timer);
        res.end();
      }
    }, everyMs);
    res.once('close', () => clearInterval(timer));
  };

  beforeAll(async () => {
    server = http.createServer((req, res) => {
      // A byte a second, for a page that would take over four minutes.
      if (req.url === '/byte-a-second') return trickle(res, { everyMs: 1000, bytes: 1, total: 256 });
      if (req.url === '/byte-a-second-gzip') return trickle(res, { everyMs: 1000, bytes: 1, total: 256, gzip: true });
      // 2 KiB every 100 ms (20 KiB/s) for 2.5 s: slow, yet well above the minimum.
      if (req.url === '/steady') return trickle(res, { everyMs: 100, bytes: 2048, total: 50 * 1024 });
      // Five bytes, 100 ms apart: a short body is over before the first window ends.
      if (req.url === '/short-and-slow') return trickle(res, { everyMs: 100, bytes: 1, total: 5 });
      res.writeHead(404).end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });

  afterAll(async () => {
    await Promise.all(fetchers.map((f) => f.close()));
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  function fetcher(minBytesPerSecond: number) {
    const settings = {
      userAgent: 'test-bot/1.0',
      connectTimeoutMs: 1000,
      headersTimeoutMs: 1000,
      bodyTimeoutMs: 5000,
      totalTimeoutMs: 20_000,
      minBytesPerSecond,
      minRateWindowMs: 1500,
    };
    const f = new HttpFetcher(settings);
    fetchers.push(f);
    return f;
  }

  async function get(f: HttpFetcher, path: string) {
    const started = performance.now();
    try {
      const response = await f.get(`http://slow.test:${port}${path}`, { address: '127.0.0.1', maxBytes: 100_000, wantBody: () => true });
      return { response, ms: performance.now() - started };
    } catch (error) {
      return { error: error as Error & { code?: string }, ms: performance.now() - started };
    }
  }

  it.each(['/byte-a-second', '/byte-a-second-gzip'])(
    'cuts %s when the first window ends, not at the total timeout',
    async (path) => {
      const { error, response, ms } = await get(fetcher(100), path);
      expect(response).toBeUndefined();
      expect(classifyFetchError(error)).toBe('timeout-rate');
      expect(error!.code).toBe('ERR_FETCH_TOO_SLOW');
      expect(error!.message).toMatch(/under the minimum of 100 B\/s/);
      expect(ms).toBeGreaterThanOrEqual(1400);
      expect(ms).toBeLessThan(4000);
    },
    15_000,
  );

  it('keeps a body that arrives slowly but above the minimum, over several windows', async () => {
    const { error, response, ms } = await get(fetcher(1024), '/steady');
    expect(error).toBeUndefined();
    expect(response!.body).toHaveLength(50 * 1024);
    expect(ms).toBeGreaterThan(1500);
  }, 15_000);

  it('never judges a body that ends before the first window does', async () => {
    const { error, response } = await get(fetcher(1024), '/short-and-slow');
    expect(error).toBeUndefined();
    expect(response!.body!.toString()).toBe('aaaaa');
  });
});
