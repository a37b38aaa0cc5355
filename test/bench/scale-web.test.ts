import { parseHtmlPage } from '@crawler/html';
import { resolveLink } from '@crawler/url';
import { ScaleWeb } from '../../bench/web/scale-web';
import { ScaleWebObserver } from '../../bench/web/scale-web-observer';

const PORT = 8080;
const web = new ScaleWeb({ hosts: 20, pagesPerHost: 30, seed: 7, port: PORT, pageKb: 4, crawlDelayHosts: 2 });

/** The same-web links of a reply, as a crawler resolves them (fragments cut, other schemes dropped). */
function links(h: number, path: string): { host: string; path: string }[] {
  const reply = web.reply(h, path)!;
  const base = `http://${web.name(h)}:${PORT}${path}`;
  return parseHtmlPage(reply.body.toString()).links.flatMap((link) => {
    const url = resolveLink(link.href, base);
    if (!url) return [];
    const u = new URL(url);
    return u.protocol === 'http:' ? [{ host: u.hostname, path: u.pathname }] : [];
  });
}

describe('the scale web', () => {
  it('answers every URL the same bytes each time, from the seed alone, and /d/N as a copy of /p/N', () => {
    const again = new ScaleWeb({ hosts: 20, pagesPerHost: 30, seed: 7, port: PORT, pageKb: 4, crawlDelayHosts: 2 });
    for (const [h, path] of [
      [0, '/'],
      [3, '/p/17'],
      [19, '/p/29'],
    ] as const)
      expect(again.reply(h, path)!.body.equals(web.reply(h, path)!.body)).toBe(true);
    expect(web.reply(3, '/d/17')!.body.equals(web.reply(3, '/p/17')!.body)).toBe(true);
    expect(web.reply(3, '/p/17')!.body.equals(web.reply(3, '/p/18')!.body)).toBe(false);
    expect(new ScaleWeb({ hosts: 20, pagesPerHost: 30, seed: 8, port: PORT, pageKb: 4 }).reply(3, '/p/17')!.body.equals(web.reply(3, '/p/17')!.body)).toBe(false);
  });

  it('reaches exactly every page of every host from the home pages, through the links of its pages', () => {
    const seen = new Set<string>();
    const queue: [number, string][] = web.seeds().map((_, h) => [h, '/']);
    for (const [h, path] of queue) seen.add(`${h}${path}`);
    while (queue.length) {
      const [h, path] = queue.shift()!;
      for (const link of links(h, path)) {
        const target = web.hostIndex(link.host);
        const parsed = web.parse(link.path);
        // Pages only: the other kinds are answered but lead nowhere new (a redirect goes back to a page).
        if (target < 0 || parsed?.kind !== 'p') continue;
        const key = `${target}${parsed.page === 0 ? '/' : `/p/${parsed.page}`}`;
        if (!seen.has(key)) {
          seen.add(key);
          queue.push([target, parsed.page === 0 ? '/' : `/p/${parsed.page}`]);
        }
      }
    }
    expect(seen.size).toBe(web.pages);
  }, 120_000);

  it('mixes links as the benchmark web does: same-host pages mostly, some cross-host, duplicates, redirects, missing, failing and disallowed ones', () => {
    const kinds = new Map<string, number>();
    for (let h = 0; h < 10; h++)
      for (let p = 0; p < 30; p++)
        for (const link of links(h, p ? `/p/${p}` : '/')) {
          const kind = web.hostIndex(link.host) !== h ? 'cross-host' : (web.parse(link.path)?.kind ?? 'other');
          kinds.set(kind, (kinds.get(kind) ?? 0) + 1);
        }
    for (const kind of ['p', 'cross-host', 'd', 'r', 'missing', 'err', 'private']) expect(kinds.get(kind) ?? 0).toBeGreaterThan(0);
    expect(kinds.get('p')!).toBeGreaterThan(kinds.get('cross-host')!);
  }, 120_000);

  it('puts most hosts behind a few shared addresses and gives the others one each', () => {
    const big = new ScaleWeb({ hosts: 10_000, pagesPerHost: 100, seed: 1, port: PORT });
    const byAddress = new Map<string, number>();
    for (let h = 0; h < big.hosts; h++) {
      const address = big.address(big.addressIndex(h));
      byAddress.set(address, (byAddress.get(address) ?? 0) + 1);
    }
    expect([1, 2, 3, 4].map((i) => byAddress.get(`127.2.0.${i}`))).toEqual([2000, 2000, 2000, 2000]);
    expect(byAddress.size).toBe(4 + 2000);
    expect([...byAddress].filter(([a]) => a.startsWith('127.1.')).every(([, n]) => n === 1)).toBe(true);
    expect(big.addresses()).toHaveLength(byAddress.size);
    expect(big.pages).toBe(1_000_000);
  });

  it('serves robots.txt that disallows /private/, with a Crawl-delay on the first hosts and none on one host in twenty', () => {
    expect(web.reply(0, '/robots.txt')!.body.toString()).toContain('Crawl-delay: 1');
    expect(web.reply(5, '/robots.txt')!.body.toString()).toMatch(/Disallow: \/private\/\n(?!Crawl)/);
    expect(web.reply(19, '/robots.txt')!.status).toBe(404);
    expect(web.disallowed(5, '/private/3')).toBe(true);
    expect(web.disallowed(19, '/private/3')).toBe(false);
    expect(web.reply(5, '/r/3')).toMatchObject({ status: 301, location: '/p/3' });
    expect(web.reply(5, '/missing/3')!.status).toBe(404);
    expect(web.reply(5, '/err/3')!.status).toBe(500);
    expect(web.reply(5, '/p/30')).toBeUndefined();
  });
});

describe('the scale web’s observer', () => {
  const answer = (done: (status: number, type: string, bytes: number) => void) => done(200, 'text/html', 100);

  it('counts pages, repeats, robots.txt violations and the pages never asked for', () => {
    const observer = new ScaleWebObserver(web, { delayMs: 0 });
    let t = 0;
    answer(observer.start(5, '/p/1', (t += 10))); // before robots.txt
    answer(observer.start(5, '/robots.txt', (t += 10)));
    answer(observer.start(5, '/', (t += 10)));
    answer(observer.start(5, '/p/1', (t += 10))); // a repeat
    answer(observer.start(5, '/private/2', (t += 10))); // disallowed
    answer(observer.start(5, '/d/1', (t += 10)));
    const o = observer.observation();
    expect(o).toMatchObject({
      requests: 6,
      robotsRequests: 1,
      pagesFetched: 2,
      pagesServed: 4,
      repeatRequests: 1,
      repeatsByKind: { p: 1 },
      beforeRobots: 1,
      robotsViolations: 1,
    });
    const lost = observer.lost(2);
    expect(lost.count).toBe(web.pages - 2);
    expect(lost.urls).toEqual([`http://${web.name(0)}:${PORT}/`, `http://${web.name(0)}:${PORT}/p/1`]);
  });

  it('holds each host to its delay and to one request at a time, and counts what is in flight on each address', () => {
    const observer = new ScaleWebObserver(web, { delayMs: 100 });
    answer(observer.start(5, '/robots.txt', 0));
    answer(observer.start(5, '/', 150));
    answer(observer.start(5, '/p/1', 200)); // 50 ms after the one before
    answer(observer.start(0, '/robots.txt', 0));
    answer(observer.start(0, '/', 600)); // Crawl-delay: 1 on host 0
    const first = observer.start(2, '/robots.txt', 0);
    const second = observer.start(2, '/', 1); // two at once on one host, 1 ms apart
    answer(first);
    answer(second);
    const o = observer.observation();
    expect(o.tooClose).toBe(3);
    expect(o.maxInFlightPerHost).toBe(2);
    expect(o.minCrawlDelayIntervalMs).toBe(600);
    expect(o.inFlight).toBe(0);
    expect(o.maxInFlightPerSharedAddress + o.maxInFlightPerOwnAddress).toBeGreaterThanOrEqual(2);
  });
});
