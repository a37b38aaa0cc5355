import { randomBytes } from 'node:crypto';
import { brotliCompressSync, createGzip, deflateRawSync, gzipSync } from 'node:zlib';
import { classifyFetchError, FetchErrorKind, FetcherSettings, FetchResponse, HttpFetcher } from '@crawler/downloader';
import { head, HostileServer, HTML, respond, startHostileServer } from './hostile-server';

/**
 * The fetcher against a server that misbehaves on purpose: every case ends in a result or a classified
 * error, quickly, and the process survives all of them, one at a time and all at once.
 */

const SETTINGS: FetcherSettings = {
  userAgent: 'hostile-test/1.0 (+http://127.0.0.1/about)',
  connectTimeoutMs: 1000,
  headersTimeoutMs: 500,
  bodyTimeoutMs: 300,
  totalTimeoutMs: 1500,
};
const MAX_BYTES = 64 * 1024;

interface Outcome {
  response?: FetchResponse;
  error?: Error & { code?: string };
  kind?: FetchErrorKind;
  ms: number;
}

interface Case {
  path: string;
  /** What the outcome must be (an `expect` that throws otherwise). */
  check(outcome: Outcome): void;
}

/** A 200 whose body is HTML exactly. */
const decodedHtml = (encoding: string) => (o: Outcome) => {
  expect(o.error).toBeUndefined();
  expect(o.response!.status).toBe(200);
  expect(o.response!.encoding).toBe(encoding);
  expect(o.response!.body!.toString()).toBe(HTML);
  expect(o.response!.truncated).toBe(false);
  expect(o.response!.decodedFrom).toBeLessThan(HTML.length);
};
const rejected =
  (...kinds: FetchErrorKind[]) =>
  (o: Outcome) => {
    expect(o.response).toBeUndefined();
    // (Node's own errors come from another realm than jest's sandbox: no instanceof here.)
    expect(typeof o.error?.message).toBe('string');
    expect(typeof o.error!.code).toBe('string');
    expect(kinds).toContain(o.kind);
    expect(o.ms).toBeLessThan(1400);
  };
const cutAtMaxBytes = (o: Outcome) => {
  expect(o.error).toBeUndefined();
  expect(o.response!.status).toBe(200);
  expect(o.response!.body).toHaveLength(MAX_BYTES);
  expect(o.response!.truncated).toBe(true);
  // Cut by the byte cap, before the total timeout would have ended it (a loaded CI machine took 1,007 ms).
  expect(o.ms).toBeLessThan(SETTINGS.totalTimeoutMs);
};

const CASES: Case[] = [
  {
    path: '/drip',
    check: (o) => {
      expect(o.kind).toBe('timeout-total');
      expect(o.error!.code).toBe('ERR_FETCH_TOTAL_TIMEOUT');
      expect(o.error!.name).toBe('TimeoutError');
      expect(o.ms).toBeGreaterThanOrEqual(1400);
      expect(o.ms).toBeLessThan(2500);
    },
  },
  { path: '/endless', check: cutAtMaxBytes },
  {
    path: '/gzip-bomb',
    check: (o) => {
      cutAtMaxBytes(o);
      expect(o.response!.encoding).toBe('gzip');
      expect(o.response!.body!.equals(Buffer.alloc(MAX_BYTES))).toBe(true);
      // The whole bomb is ~50 KB on the wire; decoding stopped at 64 KiB out of 50 MB.
      expect(o.response!.decodedFrom).toBeLessThanOrEqual(MAX_BYTES);
    },
  },
  { path: '/gzip', check: decodedHtml('gzip') },
  { path: '/br', check: decodedHtml('br') },
  { path: '/deflate', check: decodedHtml('deflate') },
  { path: '/deflate-raw', check: decodedHtml('deflate') },
  { path: '/br-then-gzip', check: decodedHtml('br, gzip') },
  {
    path: '/bad-gzip',
    check: (o) => {
      rejected('decode')(o);
      expect(o.error!.message).toMatch(/^invalid gzip data/);
    },
  },
  {
    path: '/bad-br',
    check: (o) => {
      rejected('decode')(o);
      expect(o.error!.message).toMatch(/^invalid br data/);
    },
  },
  {
    path: '/unknown-encoding',
    check: (o) => {
      rejected('decode')(o);
      expect(o.error!.message).toMatch(/unsupported content-encoding "zstd-ish"/);
    },
  },
  {
    path: '/gzip-endless',
    check: (o) => {
      cutAtMaxBytes(o);
      expect(o.response!.decodedFrom).toBeLessThan(MAX_BYTES);
    },
  },
  {
    // Incompressible data: the encoded cap is reached before the decoded one.
    path: '/gzip-incompressible',
    check: (o) => {
      expect(o.error).toBeUndefined();
      expect(o.response!.truncated).toBe(true);
      expect(o.response!.decodedFrom).toBe(MAX_BYTES);
      expect(o.response!.body!.length).toBeGreaterThan(MAX_BYTES - 1024);
      expect(o.response!.body!.length).toBeLessThanOrEqual(MAX_BYTES);
    },
  },
  {
    path: '/drip-gzip',
    check: (o) => {
      expect(o.kind).toBe('timeout-total');
      expect(o.ms).toBeLessThan(2500);
    },
  },
  { path: '/lying-length', check: rejected('protocol', 'reset') },
  { path: '/bad-status', check: rejected('protocol') },
  { path: '/bad-chunked', check: rejected('protocol') },
  { path: '/huge-headers', check: rejected('too-large-headers') },
  { path: '/reset', check: rejected('reset', 'protocol') },
  {
    path: '/slow-headers',
    check: (o) => {
      expect(o.kind).toBe('timeout-headers');
      expect(o.error!.code).toBe('UND_ERR_HEADERS_TIMEOUT');
      expect(o.ms).toBeLessThan(1450);
    },
  },
  {
    path: '/redirect-loop',
    check: (o) => {
      expect(o.response!.status).toBe(302);
      expect(o.response!.headers.location).toBe('/redirect-loop');
    },
  },
  {
    path: '/chain/3',
    check: (o) => {
      expect(o.response!.status).toBe(302);
      expect(o.response!.headers.location).toBe('/chain/2');
    },
  },
  {
    path: '/chain/0',
    check: (o) => {
      expect(o.response!.status).toBe(200);
      expect(o.response!.body!.toString()).toBe(HTML);
    },
  },
];

/** Routes beyond the built-in ones, through the server's override map. */
function extraRoutes() {
  const incompressible = gzipSync(randomBytes(4 * MAX_BYTES));
  return {
    '/echo-accept-encoding': (socket, request) => respond(socket, 200, { 'content-type': 'text/plain' }, request.headers['accept-encoding'] ?? ''),
    '/br-then-gzip': (socket) => respond(socket, 200, { 'content-type': 'text/html', 'content-encoding': 'br, gzip' }, gzipSync(brotliCompressSync(HTML))),
    '/bad-br': (socket) => respond(socket, 200, { 'content-type': 'text/html', 'content-encoding': 'br' }, deflateRawSync(HTML)),
    '/gzip-incompressible': (socket) => respond(socket, 200, { 'content-type': 'text/html', 'content-encoding': 'gzip' }, incompressible),
    /** A gzip stream of zeros that never ends. */
    '/gzip-endless': (socket) => {
      socket.write(head(200, 'OK', { 'content-type': 'text/html', 'content-encoding': 'gzip', connection: 'close' }));
      const gzip = createGzip();
      gzip.pipe(socket);
      const block = Buffer.alloc(1 << 20);
      const pump = () => {
        while (!socket.destroyed && gzip.write(block));
      };
      gzip.on('drain', pump);
      socket.once('close', () => gzip.destroy());
      pump();
    },
    /** A gzip stream dripping one compressed byte every 200 ms, flushed each time. */
    '/drip-gzip': (socket) => {
      socket.write(head(200, 'OK', { 'content-type': 'text/html', 'content-encoding': 'gzip', 'transfer-encoding': 'chunked' }));
      const gzip = createGzip({ flush: 2 /* Z_SYNC_FLUSH */ });
      gzip.on('data', (data: Buffer) => socket.write(Buffer.concat([Buffer.from(`${data.length.toString(16)}\r\n`), data, Buffer.from('\r\n')])));
      const timer = setInterval(() => gzip.write('x'), 200);
      socket.once('close', () => (clearInterval(timer), gzip.destroy()));
    },
  } satisfies Parameters<typeof startHostileServer>[0];
}

let server: HostileServer;
const fetchers: HttpFetcher[] = [];

function fetcher(settings: Partial<FetcherSettings> = {}) {
  const f = new HttpFetcher({ ...SETTINGS, ...settings });
  fetchers.push(f);
  return f;
}

async function outcome(f: HttpFetcher, path: string, wantBody = true): Promise<Outcome> {
  const started = Date.now();
  try {
    const response = await f.get(server.url(path), { address: '127.0.0.1', maxBytes: MAX_BYTES, wantBody: () => wantBody });
    return { response, ms: Date.now() - started };
  } catch (error) {
    return { error: error as Outcome['error'], kind: classifyFetchError(error), ms: Date.now() - started };
  }
}

/** Waits until the server has no connection left open (the client hung up), or fails after `ms`. */
async function allHungUp(ms: number) {
  const deadline = Date.now() + ms;
  while (server.connections() > 0) {
    if (Date.now() > deadline) throw new Error(`${server.connections()} connection(s) still open after ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

beforeAll(async () => {
  server = await startHostileServer(extraRoutes());
});

afterEach(async () => {
  await Promise.all(fetchers.splice(0).map((f) => f.close()));
});

afterAll(() => server.close());

describe('HttpFetcher against a hostile server', () => {
  it.each(CASES.map((c) => [c.path, c] as const))('%s', async (_path, c) => {
    c.check(await outcome(fetcher(), c.path));
  });

  it('asks for compressed bodies', async () => {
    const o = await outcome(fetcher(), '/echo-accept-encoding');
    expect(o.response!.body!.toString()).toBe('gzip, deflate, br');
  });

  it('stops reading an endless body at maxBytes and hangs up', async () => {
    cutAtMaxBytes(await outcome(fetcher(), '/endless'));
    await allHungUp(500);
  });

  it('stops decoding a bomb at maxBytes and hangs up', async () => {
    cutAtMaxBytes(await outcome(fetcher(), '/gzip-endless'));
    await allHungUp(500);
  });

  it('never follows a redirect itself', async () => {
    const before = server.requests.length;
    await outcome(fetcher(), '/redirect-loop');
    await outcome(fetcher(), '/chain/5');
    expect(server.requests.slice(before)).toEqual(['/redirect-loop', '/chain/5']);
  });

  it('drops an unwanted drip quickly instead of waiting for the total timeout', async () => {
    const o = await outcome(fetcher(), '/drip', false);
    expect(o.response!.body).toBeNull();
    expect(o.ms).toBeLessThan(1400);
  });

  it('accepts a large head when maxHeaderBytes allows it', async () => {
    const o = await outcome(fetcher({ maxHeaderBytes: 128 * 1024 }), '/huge-headers');
    expect(o.response!.headers['x-huge']).toHaveLength(64 * 1024);
  });

  it('connects nowhere without a vetted address', async () => {
    const started = Date.now();
    const error = await fetcher()
      .get(server.url('/chain/0'), { address: '', maxBytes: MAX_BYTES, wantBody: () => true })
      .then(
        () => undefined,
        (e: unknown) => e as Outcome['error'],
      );
    expect(error?.code).toBe('ERR_FETCH_UNVETTED_ADDRESS');
    expect(classifyFetchError(error)).toBe('unvetted');
    expect(Date.now() - started).toBeLessThan(1000);
  });

  it('survives every case at once, each on its own fetcher', async () => {
    const outcomes = await Promise.all(CASES.map((c) => outcome(fetcher(), c.path)));
    CASES.forEach((c, i) => c.check(outcomes[i]));
  });

  it('survives every case at once on one fetcher (queued on its 4 connections), and still works after', async () => {
    const f = fetcher();
    const outcomes = await Promise.all([...CASES, ...CASES].map((c, i) => outcome(f, c.path, i % 2 === 0)));
    // Queued behind drips and slow heads some run out of time; none hangs, none crashes the process.
    for (const o of outcomes) {
      expect(o.ms).toBeLessThan(2500);
      if (o.error) expect(o.kind).not.toBe('other');
    }
    const after = await outcome(f, '/chain/0');
    expect(after.response!.body!.toString()).toBe(HTML);
  });
});
