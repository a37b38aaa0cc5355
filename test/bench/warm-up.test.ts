import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { warmUp } from '../../bench/web/warm-up';

describe('warmUp', () => {
  let server: Server;
  let port = 0;
  const seen: string[] = [];

  beforeAll(async () => {
    server = createServer((req, res) => {
      seen.push(`${req.headers.host}${req.url}`);
      res.end('<html></html>');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => new Promise((resolve) => server.close(resolve)));

  it("fetches the web's first pages by their host names, each once", async () => {
    const hosts = [
      { name: 'a.test', ip: '127.0.0.1' },
      { name: 'b.test', ip: '127.0.0.1' },
    ];
    const pageUrls = (limit: number) => Array.from({ length: limit }, (_, i) => `http://${hosts[i % 2].name}:${port}/p/${i}`);
    await warmUp({ hosts, pageUrls }, 50);
    expect(seen).toHaveLength(50);
    expect(new Set(seen).size).toBe(50);
    expect(seen).toContain(`b.test:${port}/p/49`);
    await warmUp({ hosts, pageUrls }, 0);
    expect(seen).toHaveLength(50);
  });
});
