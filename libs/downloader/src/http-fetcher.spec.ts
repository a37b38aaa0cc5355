import http, { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { AddressInfo, createServer as createTcpServer, Server as TcpServer, Socket } from 'node:net';
import { AddressFailover, FetcherSettings, HttpFetcher } from './http-fetcher';

/** A local server on a loopback address, recording the requests it saw. */
interface TestServer {
  port: number;
  seen: { url: string; headers: IncomingHttpHeaders }[];
  close(): Promise<void>;
}

const servers: { close(): Promise<void> }[] = [];
const fetchers: HttpFetcher[] = [];

async function serve(handler: (req: IncomingMessage, res: ServerResponse) => void, host = '127.0.0.1', port = 0): Promise<TestServer> {
  const seen: TestServer['seen'] = [];
  const server = http.createServer((req, res) => {
    seen.push({ url: req.url!, headers: req.headers });
    handler(req, res);
  });
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(port, host, resolve));
  const handle: TestServer = {
    port: (server.address() as AddressInfo).port,
    seen,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  servers.push(handle);
  return handle;
}

const SETTINGS: FetcherSettings = {
  userAgent: 'test-bot/1.0 (+http://127.0.0.1/about)',
  connectTimeoutMs: 1000,
  headersTimeoutMs: 1000,
  bodyTimeoutMs: 1000,
  totalTimeoutMs: 1500,
};

function fetcher(settings: Partial<FetcherSettings> = {}) {
  const f = new HttpFetcher({ ...SETTINGS, ...settings });
  fetchers.push(f);
  return f;
}

const html = (maxBytes = 100_000) => ({ address: '127.0.0.1', maxBytes, wantBody: () => true });

afterEach(async () => {
  await Promise.all(fetchers.splice(0).map((f) => f.close()));
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

/** Whether this machine can bind 127.0.0.2 (Linux routes all of 127/8 to lo; macOS does not by default). */
async function canBind(host: string): Promise<boolean> {
  const probe: TcpServer = createTcpServer();
  return new Promise((resolve) => {
    probe.once('error', () => resolve(false));
    probe.listen(0, host, () => probe.close(() => resolve(true)));
  });
}

describe('HttpFetcher', () => {
  it('connects to the vetted address whatever the name, with our User-Agent and the name in Host', async () => {
    const server = await serve((req, res) => {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'x-custom': 'yes' });
      res.end('<title>hi</title>');
    });
    const response = await fetcher().get(`http://made-up.test:${server.port}/page?q=1`, html());
    expect(response.status).toBe(200);
    expect(response.contentType).toBe('text/html; charset=utf-8');
    expect(response.headers['x-custom']).toBe('yes');
    expect(response.body!.toString()).toBe('<title>hi</title>');
    expect(response.truncated).toBe(false);
    expect(response.durationMs).toBeGreaterThanOrEqual(0);
    expect(server.seen).toHaveLength(1);
    expect(server.seen[0].url).toBe('/page?q=1');
    expect(server.seen[0].headers['user-agent']).toBe(SETTINGS.userAgent);
    expect(server.seen[0].headers.host).toBe(`made-up.test:${server.port}`);
    expect(server.seen[0].headers['accept-encoding']).toBe('gzip, deflate, br');
  });

  it('matches the name case-insensitively', async () => {
    const server = await serve((req, res) => res.end('ok'));
    const response = await fetcher().get(`http://Made-Up.TEST:${server.port}/`, html());
    expect(response.body!.toString()).toBe('ok');
  });

  it('never follows redirects itself', async () => {
    const server = await serve((req, res) => {
      res.writeHead(301, { location: '/elsewhere' });
      res.end();
    });
    const response = await fetcher().get(`http://made-up.test:${server.port}/`, { ...html(), wantBody: (s) => s === 200 });
    expect(response.status).toBe(301);
    expect(response.headers.location).toBe('/elsewhere');
    expect(server.seen.map((s) => s.url)).toEqual(['/']);
  });

  it('cuts the body at maxBytes and marks it truncated', async () => {
    const server = await serve((req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end(Buffer.alloc(10 * 1024, 'a'));
    });
    const response = await fetcher().get(`http://made-up.test:${server.port}/`, html(1000));
    expect(response.body).toHaveLength(1000);
    expect(response.truncated).toBe(true);
  });

  it('cuts a body that arrives in many chunks at maxBytes', async () => {
    const server = await serve((req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      for (let i = 0; i < 20; i++) res.write(Buffer.alloc(300, 'b'));
      res.end();
    });
    const response = await fetcher().get(`http://made-up.test:${server.port}/`, html(1000));
    expect(response.body).toEqual(Buffer.alloc(1000, 'b'));
    expect(response.truncated).toBe(true);
  });

  it('does not mark a body of exactly maxBytes truncated', async () => {
    const server = await serve((req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.write(Buffer.alloc(600, 'c'));
      res.end(Buffer.alloc(400, 'c'));
    });
    const response = await fetcher().get(`http://made-up.test:${server.port}/`, html(1000));
    expect(response.body).toHaveLength(1000);
    expect(response.truncated).toBe(false);
  });

  it('discards the body unread when it is not wanted, and passes status and type to the decision', async () => {
    const server = await serve((req, res) => {
      res.writeHead(200, { 'content-type': 'image/png', 'content-length': '2048' });
      res.end(Buffer.alloc(2048));
    });
    const asked: [number, string][] = [];
    const response = await fetcher().get(`http://made-up.test:${server.port}/x.png`, {
      address: '127.0.0.1',
      maxBytes: 100_000,
      wantBody: (status, type) => (asked.push([status, type]), false),
    });
    expect(asked).toEqual([[200, 'image/png']]);
    expect(response.body).toBeNull();
    expect(response.truncated).toBe(false);
    expect(response.headers['content-length']).toBe('2048');
  });

  it('gives up when the headers do not come within headersTimeoutMs', async () => {
    // Accepts the connection, reads the request, never answers.
    const sockets: Socket[] = [];
    const silent = createTcpServer((socket) => sockets.push(socket.on('data', () => undefined)));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    servers.push({
      close: () => new Promise<void>((resolve) => (sockets.forEach((s) => s.destroy()), silent.close(() => resolve()))),
    });
    const port = (silent.address() as AddressInfo).port;
    const started = Date.now();
    // undici's timers are coarse (ticks of ~500 ms for headersTimeout), so allow that much slack.
    const failure = await fetcher({ headersTimeoutMs: 200, totalTimeoutMs: 5000 })
      .get(`http://made-up.test:${port}/`, html())
      .then(
        () => null,
        (error: unknown) => error as { code?: string },
      );
    expect(failure?.code).toBe('UND_ERR_HEADERS_TIMEOUT');
    expect(Date.now() - started).toBeLessThan(1500);
  });

  it('abandons a body that trickles in for longer than totalTimeoutMs', async () => {
    const server = await serve((req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      const drip = setInterval(() => res.write('x'), 50);
      res.on('close', () => clearInterval(drip));
    });
    const started = Date.now();
    const failure = await fetcher({ totalTimeoutMs: 300, bodyTimeoutMs: 5000 })
      .get(`http://made-up.test:${server.port}/`, html())
      .then(
        () => null,
        (error: unknown) => error as Error,
      );
    const elapsed = Date.now() - started;
    expect(failure?.name).toBe('TimeoutError');
    expect(elapsed).toBeGreaterThanOrEqual(250);
    expect(elapsed).toBeLessThan(1000);
  });

  it('fails when nothing listens at the vetted address', async () => {
    const server = await serve((req, res) => res.end());
    const port = server.port;
    await server.close();
    servers.splice(servers.indexOf(server), 1);
    await expect(fetcher().get(`http://made-up.test:${port}/`, html())).rejects.toMatchObject({ code: 'ECONNREFUSED' });
  });

  it('sends each name to its own vetted address', async () => {
    if (!(await canBind('127.0.0.2'))) {
      console.warn('127.0.0.2 is not bindable here: skipping the two-address case');
      return;
    }
    const two = await serve((req, res) => res.end('two'), '127.0.0.2');
    // The same port on both addresses where possible, so that only the address tells the servers apart.
    const one = await serve((req, res) => res.end('one'), '127.0.0.1', two.port).catch(() => serve((req, res) => res.end('one'), '127.0.0.1'));
    const f = fetcher();
    const [a, b] = await Promise.all([
      f.get(`http://one.test:${one.port}/`, { ...html(), address: '127.0.0.1' }),
      f.get(`http://two.test:${two.port}/`, { ...html(), address: '127.0.0.2' }),
    ]);
    expect([a.body!.toString(), b.body!.toString()]).toEqual(['one', 'two']);
    // …and again one after the other, over the kept-alive connections.
    expect((await f.get(`http://two.test:${two.port}/`, { ...html(), address: '127.0.0.2' })).body!.toString()).toBe('two');
    expect((await f.get(`http://one.test:${one.port}/`, { ...html(), address: '127.0.0.1' })).body!.toString()).toBe('one');
    expect(one.seen.map((s) => s.headers.host)).toEqual([`one.test:${one.port}`, `one.test:${one.port}`]);
    expect(two.seen.map((s) => s.headers.host)).toEqual([`two.test:${two.port}`, `two.test:${two.port}`]);
  });

  describe('regressions', () => {
    it('serves concurrent fetches of one name', async () => {
      const server = await serve((req, res) => {
        setTimeout(() => {
          res.writeHead(200, { connection: 'close', 'content-type': 'text/html' });
          res.end('ok');
        }, 30);
      });
      const f = fetcher();
      const results = await Promise.allSettled(Array.from({ length: 8 }, () => f.get(`http://made-up.test:${server.port}/`, html())));
      expect(results.map((r) => r.status)).toEqual(Array(8).fill('fulfilled'));
    });
  });
});

describe("HttpFetcher on a name's other addresses", () => {
  const fetcherOf = fetcher;
  /** Skips (saying why) on a machine that cannot bind the address, as macOS for 127.0.0.2 or a host without IPv6. */
  async function bindable(host: string): Promise<boolean> {
    if (await canBind(host)) return true;
    console.warn(`${host} is not bindable here: skipping this failover case`);
    return false;
  }
  const failovers = () => {
    const seen: AddressFailover[] = [];
    return { seen, onFailover: (failover: AddressFailover) => void seen.push(failover) };
  };

  it('moves on to the next address when the connection is refused, and says which one answered', async () => {
    if (!(await bindable('127.0.0.2'))) return;
    const server = await serve((req, res) => res.end('from .2'), '127.0.0.2');
    const { seen, onFailover } = failovers();
    const fetcher = fetcherOf();
    // Nothing listens on 127.0.0.3: the name's first address refuses the connection.
    const response = await fetcher.get(`http://two.test:${server.port}/`, { ...html(), address: '127.0.0.3', fallbacks: ['127.0.0.2'], onFailover });
    expect(response.body!.toString()).toBe('from .2');
    expect(response.address).toBe('127.0.0.2');
    expect(seen).toEqual([{ from: '127.0.0.3', to: '127.0.0.2', error: expect.objectContaining({ code: 'ECONNREFUSED' }) }]);
    expect(server.seen.map((s) => s.headers.host)).toEqual([`two.test:${server.port}`]);
    // The next fetch of the name starts at the address that answered (its kept-alive connection goes there).
    const again = await fetcher.get(`http://two.test:${server.port}/`, { ...html(), address: '127.0.0.3', fallbacks: ['127.0.0.2'], onFailover });
    expect(again.address).toBe('127.0.0.2');
    expect(seen).toHaveLength(1);
  });

  it('falls back from an IPv4 address to an IPv6 one', async () => {
    if (!(await bindable('::1'))) return;
    const server = await serve((req, res) => res.end('from ::1'), '::1');
    const { seen, onFailover } = failovers();
    const response = await fetcher().get(`http://dual.test:${server.port}/`, { ...html(), address: '127.0.0.3', fallbacks: ['::1'], onFailover });
    expect(response.body!.toString()).toBe('from ::1');
    expect(response.address).toBe('::1');
    expect(seen.map(({ from, to }) => [from, to])).toEqual([['127.0.0.3', '::1']]);
  });

  it('tries maxAddressTries addresses at most, the first included', async () => {
    if (!(await bindable('127.0.0.2'))) return;
    const server = await serve((req, res) => res.end('ok'), '127.0.0.2');
    const url = `http://three.test:${server.port}/`;
    const options = { ...html(), address: '127.0.0.3', fallbacks: ['127.0.0.4', '127.0.0.2'] };
    const bounded = failovers();
    await expect(fetcher({ maxAddressTries: 2 }).get(url, { ...options, onFailover: bounded.onFailover })).rejects.toMatchObject({ code: 'ECONNREFUSED' });
    expect(bounded.seen.map(({ to }) => to)).toEqual(['127.0.0.4']);
    const enough = failovers();
    expect((await fetcher({ maxAddressTries: 3 }).get(url, { ...options, onFailover: enough.onFailover })).address).toBe('127.0.0.2');
    expect(enough.seen.map(({ to }) => to)).toEqual(['127.0.0.4', '127.0.0.2']);
  });

  it('does not move on after connecting: an HTTP error or a reset is the answer', async () => {
    if (!(await bindable('127.0.0.2'))) return;
    const busy = await serve((req, res) => {
      res.writeHead(503);
      res.end();
    }, '127.0.0.2');
    const other = await serve((req, res) => res.end('other'), '127.0.0.1', busy.port).catch(() => undefined);
    const { seen, onFailover } = failovers();
    const options = { ...html(), address: '127.0.0.2', fallbacks: ['127.0.0.1'], onFailover };
    expect((await fetcher().get(`http://busy.test:${busy.port}/`, options)).status).toBe(503);
    const reset = await new Promise<TcpServer>((resolve) => {
      const server = createTcpServer((socket: Socket) => socket.destroy());
      server.listen(0, '127.0.0.2', () => resolve(server));
    });
    servers.push({ close: () => new Promise<void>((resolve) => reset.close(() => resolve())) });
    const port = (reset.address() as AddressInfo).port;
    await expect(fetcher().get(`http://reset.test:${port}/`, options)).rejects.toBeTruthy();
    expect(seen).toEqual([]);
    expect(other?.seen ?? []).toEqual([]);
  });
});

describe('HttpFetcher for the WARC archive (readUnwanted)', () => {
  it('reads an unwanted body when readUnwanted says so, under the same limit, apart from the wanted one; the request headers and time come back', async () => {
    const server = await serve((req, res) =>
      req.url === '/long'
        ? res.writeHead(503, { 'content-type': 'text/html' }).end('x'.repeat(500))
        : req.url === '/broken'
          ? (res.writeHead(404, { 'content-length': '1000' }).write('par'), setTimeout(() => req.socket.destroy(), 20))
          : res.writeHead(404).end('gone'),
    );
    const f = fetcher({ readUnwanted: (status) => status >= 400 });
    const options = { address: '127.0.0.1', maxBytes: 100, wantBody: () => false, headers: { 'if-none-match': '"a"' } };
    const gone = await f.get(`http://127.0.0.1:${server.port}/gone`, options);
    expect([gone.body, gone.unwantedBody?.toString(), gone.truncated]).toEqual([null, 'gone', false]);
    expect(gone.requestHeaders).toMatchObject({ 'if-none-match': '"a"', 'user-agent': SETTINGS.userAgent });
    expect(Date.parse(gone.requestedAt)).toBeLessThanOrEqual(Date.now());
    const long = await f.get(`http://127.0.0.1:${server.port}/long`, options);
    expect([long.body, long.unwantedBody?.length, long.truncated]).toEqual([null, 100, true]);
    // A body that breaks off leaves the answer as it was: a 404, no body.
    const broken = await f.get(`http://127.0.0.1:${server.port}/broken`, options);
    expect([broken.status, broken.unwantedBody]).toEqual([404, undefined]);
    // Without it, an unwanted body is not read.
    expect((await fetcher().get(`http://127.0.0.1:${server.port}/gone`, options)).unwantedBody).toBeUndefined();
  });
});
