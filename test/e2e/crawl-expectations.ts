import type { ExpectedCrawl } from '../web/expected-crawl';
import type { TestWeb } from '../web/test-web';

/**
 * What every complete crawl of the test web must show, whatever the shape that ran it, judged from the
 * requests the test web itself recorded. `expected` is what the crawler should fetch (default: the plain
 * crawl, `web.expected`; with plugins, e.g. `web.expectedWithPlugins(['png'])`).
 */
export function expectPoliteCompleteCrawl(web: TestWeb, options: { delayMs: number; expected?: ExpectedCrawl }) {
  const counts = web.requestCountByUrl();
  const { reachable, disallowed, crawlDelay } = options.expected ?? web.expected;

  // Every reachable allowed page fetched exactly once.
  const notOnce = [...reachable].filter((url) => counts.get(url) !== 1).map((url) => `${url} ×${counts.get(url) ?? 0}`);
  expect(notOnce).toEqual([]);

  // No disallowed page fetched, and nothing fetched but reachable pages and robots.txt.
  expect([...disallowed].filter((url) => counts.has(url))).toEqual([]);
  const unexpected = [...counts.keys()].filter((url) => !reachable.has(url) && !url.endsWith('/robots.txt'));
  expect(unexpected).toEqual([]);

  // robots.txt first on every host, and once.
  const firstPathByHost = new Map<string, string>();
  for (const request of web.requests) if (!firstPathByHost.has(request.host)) firstPathByHost.set(request.host, request.path);
  const robotsNotFirst = [...firstPathByHost].filter(([, path]) => path !== '/robots.txt').map(([host]) => host);
  expect(robotsNotFirst).toEqual([]);
  // …except where robots.txt fails (5xx): the site is deferred and robots.txt tried again, never a page.
  const failing = new Set(web.roles.robotsError);
  const robotsTwice = [...counts].filter(([url, n]) => url.endsWith('/robots.txt') && n > 1 && !failing.has(new URL(url).hostname));
  expect(robotsTwice).toEqual([]);

  // Politeness: never two requests to one host closer than the delay (robots.txt included), nor than Crawl-delay.
  const intervals = web.minIntervalByHost();
  const tooClose = [...intervals].filter(([host, gap]) => gap < Math.max(options.delayMs, (crawlDelay.get(host) ?? 0) * 1000));
  expect(tooClose).toEqual([]);
}

/** Pages answering 200 with HTML, minus the copies of exact duplicates: what must be stored. */
export function expectedStoredPages(web: TestWeb): number {
  const ok = new Set(
    web.requests
      .filter((r) => r.status === 200 && r.path !== '/robots.txt')
      .map((r) => new URL(r.path, web.origin(r.host)).href)
      .filter((url) => !web.expected.sitemaps.has(url)),
  );
  const copies = web.expected.duplicates.reduce((n, group) => n + group.length - 1, 0);
  return ok.size - copies;
}
