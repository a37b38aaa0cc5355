import { Registry } from 'prom-client';
import { loadConfig } from '@crawler/config';
import { FetchOutcome } from '@crawler/contracts';
import { MemoryFrontierStore } from '@crawler/frontier-store';
import { CrawlActivity, FailedUrls, HostsAside, HubLinks, SiteSettingsService, UnreachedHostsRegistry } from '@crawler/crawl-state';
import { siteRule } from '@crawler/site-settings';
import { CrawlStats } from '@crawler/runtime';
import { MemoryStateStore } from '@crawler/state';
import { DispatchSignal } from './dispatch-signal';
import { decodeEntry } from './frontier-entry';
import { FrontierService } from './frontier.service';
import { DefaultPrioritizer, Prioritizer, PrioritizerChain } from './prioritizer';

function frontier(overrides: Record<string, unknown> = {}, prioritizers: Prioritizer[] = [], siteRules: ReturnType<typeof siteRule>[] = []) {
  const config = { ...loadConfig({}, { 'frontier.maxRetries': 2, ...overrides }), siteRules };
  const store = new MemoryFrontierStore({ ...config.frontier, auditLength: 10 });
  const state = new MemoryStateStore();
  const stats = new CrawlStats(state, new Registry(), loadConfig({}));
  const aside = new HostsAside(state);
  const failed = new FailedUrls(state, config);
  const logs: unknown[] = [];
  const logger = { debug() {}, warn() {}, info: (fields: unknown) => logs.push(fields) } as any;
  const hubLinks = new HubLinks(state, config);
  const sites = new SiteSettingsService(state, config);
  const service = new FrontierService(
    store,
    new PrioritizerChain([new DefaultPrioritizer(), ...prioritizers]),
    config,
    logger,
    stats,
    new DispatchSignal(),
    new CrawlActivity(state),
    aside,
    new UnreachedHostsRegistry(state, config),
    failed,
    hubLinks,
    sites,
  );
  return { service, store, stats, aside, failed, logs, hubLinks, sites };
}

const links = (host: string, paths: string[]) => paths.map((p) => ({ url: `http://${host}${p}`, depth: 1, source: 'link' as const, hops: 0 }));

/** Claims the next URL and completes it with what `outcome` makes of it; answers false when nothing was due. */
async function turn(f: ReturnType<typeof frontier>, outcome: (claim: { leaseId: string; host: string; retry: any }) => Partial<FetchOutcome>) {
  const [claim] = await f.store.claim({ now: Date.now() + 10 * 60_000, max: 1, leaseMs: 60_000 });
  if (!claim) return false;
  const retry = decodeEntry(claim.item);
  await f.service.done({
    v: 1,
    leaseId: claim.leaseId,
    fetchId: 'f',
    url: retry.url,
    host: claim.host,
    requested: false,
    durationMs: 0,
    ...outcome({ ...claim, retry }),
  } as FetchOutcome);
  return true;
}

describe('FrontierService', () => {
  it("takes the address a fetch reports as the host's, and names it in the politeness record (after a failover, the one reached)", async () => {
    const f = frontier();
    await f.service.add(links('two.test', ['/1', '/2']));
    // Resolved to 127.0.0.3 first; the fetch failed over and reached 127.0.0.2.
    await turn(f, () => ({ kind: 'resolved', ip: '127.0.0.3', retry: { url: 'http://two.test/1', depth: 1, source: 'link', hops: 0 } }));
    await turn(f, () => ({ kind: 'fetched', requested: true, status: 200, durationMs: 1, ip: '127.0.0.2' }));
    expect(await f.store.hostInfo('two.test')).toMatchObject({ ip: '127.0.0.2' });
    const audit = (await f.store.auditLog('two.test')).map((line) => JSON.parse(line)).filter((entry) => entry.event === 'fetched');
    expect(audit).toEqual([expect.objectContaining({ ip: '127.0.0.2', status: 200 })]);
    const [next] = await f.store.claim({ now: Date.now() + 10 * 60_000, max: 1, leaseMs: 60_000 });
    expect(next).toMatchObject({ host: 'two.test', ip: '127.0.0.2' });
  });

  describe('per-site settings', () => {
    const fetched = { kind: 'fetched' as const, requested: true, status: 200, durationMs: 1 };

    it("drops a site's URLs deeper than its maxDepth, and no other site's", async () => {
      const f = frontier({}, [], [siteRule('*.a.test', { maxDepth: 1 })]);
      const deep = (host: string, depth: number) => ({ url: `http://${host}/d${depth}`, depth, source: 'link' as const, hops: 0 });
      await f.service.add([deep('www.a.test', 1), deep('www.a.test', 2), deep('b.test', 2)]);
      expect((await f.store.stats()).size).toBe(2);
      expect((await f.stats.totals())['frontier.site-depth']).toBe(1);
    });

    it("stops a host at its site's maxPages: its other URLs are dropped, now and to come", async () => {
      const f = frontier({}, [], [siteRule('a.test', { maxPages: 2 })]);
      await f.service.add(links('a.test', ['/1', '/2', '/3', '/4']));
      while (await turn(f, () => fetched));
      await f.service.add(links('a.test', ['/5']));
      expect(await turn(f, () => fetched)).toBe(false);
      expect(await f.store.hostInfo('a.test')).toMatchObject({ fetched: 2, queued: 0 });
      expect((await f.stats.totals())['frontier.site-budget']).toBe(2);
      expect((await f.store.auditLog('a.test')).map((l) => JSON.parse(l).event)).toContain('site-budget');
    });

    it("stops a host at its site's maxBytes: the page that brings it there drops its other URLs, now and to come", async () => {
      const f = frontier({}, [], [siteRule('a.test', { maxBytes: 25_000 })]);
      await f.service.add(links('a.test', ['/1', '/2', '/3', '/4', '/5']));
      await f.service.add(links('b.test', ['/1', '/2']));
      while (await turn(f, () => ({ ...fetched, bytes: 10_000 })));
      await f.service.add(links('a.test', ['/6']));
      expect(await turn(f, () => ({ ...fetched, bytes: 10_000 }))).toBe(false);
      // Three pages (30 000 bytes) reach the budget; the host's two other URLs are dropped. b.test has no budget.
      expect(await f.store.hostInfo('a.test')).toMatchObject({ fetched: 3, queued: 0 });
      expect(await f.store.hostInfo('b.test')).toMatchObject({ fetched: 2 });
      expect((await f.stats.totals())['frontier.site-byte-budget']).toBe(2);
      const audit = (await f.store.auditLog('a.test')).map((l) => JSON.parse(l));
      expect(audit.filter((e) => e.event === 'site-byte-budget')).toEqual([expect.objectContaining({ maxBytes: 25_000, spent: 30_000, dropped: 2 })]);
    });

    it("holds a site's hosts to its concurrency from their first claim, and a live change from each host's next completion", async () => {
      const f = frontier({}, [], [siteRule('*.a.test', { concurrency: 3 })]);
      await f.service.add([...links('www.a.test', ['/1', '/2', '/3', '/4', '/5']), ...links('b.test', ['/1', '/2'])]);
      const later = Date.now() + 10 * 60_000;
      const claims = await f.store.claim({ now: later, max: 100, leaseMs: 60_000 });
      expect(claims.filter((c) => c.host === 'www.a.test')).toHaveLength(3);
      expect(claims.filter((c) => c.host === 'b.test')).toHaveLength(1);
      await f.sites.set('*.a.test', { concurrency: 1 });
      const done = (claim: (typeof claims)[number]) =>
        f.service.done({ v: 1, leaseId: claim.leaseId, fetchId: 'f', url: decodeEntry(claim.item).url, host: claim.host, ...fetched } as FetchOutcome);
      for (const claim of claims) await done(claim);
      expect(await f.store.hostInfo('www.a.test')).toMatchObject({ hostLimit: 1, inFlight: 0 });
      expect((await f.store.hostInfo('b.test')).hostLimit).toBeUndefined();
      const next = await f.store.claim({ now: later + 10 * 60_000, max: 100, leaseMs: 60_000 });
      expect(next.filter((c) => c.host === 'www.a.test')).toHaveLength(1);
    });

    it("rests a host its site's minDelayMs (cause `site`), under the operator's override", async () => {
      const f = frontier({ 'frontier.minDelayMs': 100 }, [], [siteRule('*.a.test', { minDelayMs: 4000 })]);
      await f.service.add(links('a.test', ['/1', '/2', '/3']));
      await turn(f, () => fetched);
      expect((await f.store.hostInfo('a.test')).politeness).toMatchObject({ delayMs: 4000, cause: 'site' });
      await f.store.setHostControls('a.test', { delayMs: 500 }, Date.now());
      await turn(f, () => fetched);
      expect((await f.store.hostInfo('a.test')).politeness).toMatchObject({ delayMs: 500, cause: 'override' });
    });
  });

  it('queues URLs where the prioritizer chain puts them: the default scoring, then a plugin’s, clamped to the front queues', async () => {
    // A plugin prioritizer that sends /keep ahead, puts /far past the last queue and keeps the rest as proposed.
    const plugin: Prioritizer = { prioritize: (urls, proposed) => urls.map((u, i) => (u.url.endsWith('/keep') ? 0.6 : u.url.endsWith('/far') ? 99 : proposed[i])) };
    const f = frontier({ 'frontier.frontQueues': 4, 'frontier.backQueues': 1 }, [plugin]);
    await f.service.add([{ url: 'http://seed.test/', depth: 0, source: 'seed', hops: 0 }]);
    await f.service.add(links('a.test', ['/keep', '/far', '/plain']));
    // The seed's host holds the one back queue: the rest wait in their front queues.
    expect((await f.store.stats()).front).toEqual([0, 1, 0, 2]);
  });

  it('prunes to FRONTIER_MAX_QUEUED, lowest priority first, counted and logged', async () => {
    const f = frontier({ 'frontier.maxQueued': 2, 'frontier.backQueues': 1 });
    await f.service.add([{ url: 'http://seed.test/', depth: 0, source: 'seed', hops: 0 }]);
    await f.service.add([
      ...links('a.test', ['/1']),
      { url: 'http://b.test/deep', depth: 5, source: 'link', hops: 0 },
      { url: 'http://c.test/', depth: 0, source: 'seed', hops: 0 },
    ]);
    const { front } = await f.store.stats();
    expect(front.reduce((a, b) => a + b, 0)).toBe(2);
    expect(front[0]).toBe(1);
    expect((await f.stats.totals())['frontier.pruned']).toBe(1);
    expect(f.logs).toContainEqual(expect.objectContaining({ event: 'frontier-pruned', dropped: 1, maxQueued: 2 }));
  });

  // A timeout is retried like the other transient failures, after the same waits (not at once, at the head of its host's queue).
  it.each([
    ['reset', 'ECONNRESET: read ECONNRESET'],
    ['timeout-rate', 'ERR_FETCH_TOO_SLOW: body arrived at 1 B/s'],
  ] as const)(
    'holds a URL that failed transiently (%s) for a retry after the backoff, while its host goes on, and gives it up after FRONTIER_TRANSIENT_ATTEMPTS',
    async (errorKind, error) => {
      const f = frontier();
      await f.service.add(links('a.test', ['/1', '/2']));
      const reset = ({ retry }: { retry: any }) => ({
        kind: 'error' as const,
        requested: true,
        error,
        errorKind,
        durationMs: 3,
        retry,
      });
      const before = Date.now();
      await turn(f, reset);
      expect(await f.store.stats()).toMatchObject({ size: 1, scheduled: 1, leased: 0 });
      // Held for 30 s ± 25 %, not given to the host again at once: its other URL comes first.
      expect(await f.store.promoteDue(before + 22_499, 10)).toBe(0);
      expect(await turn(f, ({ retry }) => (expect(retry.url).toBe('http://a.test/2'), { kind: 'fetched', requested: true, status: 200, durationMs: 3, retry }))).toBe(
        true,
      );
      expect(await f.store.promoteDue(Date.now() + 37_501, 10)).toBe(1);
      await turn(f, ({ retry }) => (expect(retry).toMatchObject({ url: 'http://a.test/1', failures: 1 }), reset({ retry })));
      // The second wait is doubled: 60 s ± 25 %.
      expect(await f.store.promoteDue(Date.now() + 44_000, 10)).toBe(0);
      expect(await f.store.promoteDue(Date.now() + 75_001, 10)).toBe(1);
      await turn(f, reset);
      expect(await f.store.stats()).toMatchObject({ size: 0, scheduled: 0 });
      expect(await f.stats.totals()).toMatchObject({ [`frontier.retry.${errorKind}`]: 2, 'failed-urls': 1, [`failed-urls.${errorKind}`]: 1 });
      const listed = await f.failed.list();
      expect(listed).toMatchObject({
        total: 1,
        urls: [{ seq: 1, url: 'http://a.test/1', host: 'a.test', reason: errorKind, attempts: 3, error }],
      });
      // One URL failing three times is one strike: its host was never backed off.
      expect(await f.aside.listSetAside()).toEqual([]);
      expect(Date.parse(listed.urls[0].at)).toBeGreaterThanOrEqual(before);
    },
  );

  it('tries a 500 again and counts the page once it is fetched; a 404 and a TLS failure are not tried again', async () => {
    const f = frontier();
    await f.service.add(links('a.test', ['/500']));
    await turn(f, ({ retry }) => ({ kind: 'fetched', requested: true, status: 500, durationMs: 3, retry }));
    expect((await f.store.counts()).fetched).toBe(0);
    await f.store.promoteDue(Date.now() + 40_000, 10);
    await turn(f, ({ retry }) => ({ kind: 'fetched', requested: true, status: 200, durationMs: 3, retry }));
    expect((await f.store.counts()).fetched).toBe(1);
    expect(await f.store.stats()).toMatchObject({ size: 0, scheduled: 0 });

    await f.service.add(links('b.test', ['/404', '/tls']));
    await turn(f, ({ retry }) => ({ kind: 'fetched', requested: true, status: 404, durationMs: 3, retry }));
    await turn(f, ({ retry }) => ({ kind: 'error', requested: true, error: 'CERT_HAS_EXPIRED', errorKind: 'tls', durationMs: 3, retry }));
    expect(await f.store.stats()).toMatchObject({ size: 0, scheduled: 0 });
    // The 404 is the site's answer (counted by status), the TLS failure a URL that could not be fetched.
    expect((await f.failed.list()).urls).toEqual([expect.objectContaining({ url: 'http://b.test/tls', reason: 'tls', attempts: 1 })]);
    expect(await f.stats.totals()).toMatchObject({ 'failed-urls': 1, 'failed-urls.tls': 1 });
  });

  it('records a URL answered 429/503 past FRONTIER_MAX_RETRIES as failed, with its status', async () => {
    const f = frontier();
    await f.service.add(links('a.test', ['/busy']));
    let turns = 0;
    while (await turn(f, ({ retry }) => ({ kind: 'fetched', requested: true, status: 503, durationMs: 3, retry }))) turns++;
    expect(turns).toBe(3);
    expect((await f.failed.list()).urls).toEqual([expect.objectContaining({ url: 'http://a.test/busy', reason: 'status-503', status: 503, attempts: 3 })]);
    expect(await f.stats.totals()).toMatchObject({ 'failed-urls': 1, 'failed-urls.status-503': 1 });
  });

  it('defers a host whose name failed to resolve for a passing reason, then gives up on all its URLs after the retry limit', async () => {
    const f = frontier();
    await f.service.add(links('a.test', ['/1', '/2', '/3']));
    let turns = 0;
    while (await turn(f, ({ retry }) => ({ kind: 'deferred', error: 'DNS lookup of a.test failed: ETIMEOUT', retryAfterMs: 0, retry }))) turns++;
    expect(turns).toBe(3); // the first URL: 2 deferrals kept it, the 3rd gave up on the host
    expect((await f.store.stats()).size).toBe(0);
    expect((await f.stats.totals())['error.dns-unresolvable']).toBe(3);
    await f.service.add(links('a.test', ['/4']));
    expect(await f.store.claim({ now: Date.now(), max: 1, leaseMs: 60_000 })).toEqual([]);
  });

  it('keeps requeuing a host deferred for its robots.txt without a failure record yet, never taking it for a DNS failure', async () => {
    const f = frontier();
    await f.service.add(links('a.test', ['/1']));
    // Another URL of the host is fetching robots.txt: the downloader defers this one (cause robots, no plan yet),
    // more times than FRONTIER_MAX_RETRIES.
    for (let tries = 1; tries <= 5; tries++) {
      expect(await turn(f, ({ retry }) => ({ kind: 'deferred', cause: 'robots', requested: false, retryAfterMs: 0, retry }))).toBe(true);
    }
    expect((await f.store.stats()).size).toBe(1);
    expect(await f.aside.listSetAside()).toEqual([]);
    expect((await f.stats.totals())['error.dns-unresolvable']).toBeUndefined();
  });

  it('keeps a host whose robots.txt is unreachable waiting, listed with its next try, until the downloader gives it up', async () => {
    const f = frontier();
    await f.service.add(links('a.test', ['/1', '/2', '/3']));
    const since = Date.now();
    // More tries than FRONTIER_MAX_RETRIES: the give-up is the downloader's, by time, not a count of turns.
    for (let tries = 1; tries <= 4; tries++) {
      const plan = { since, tries, nextTryAt: since + tries * 1000, giveUpAt: since + 60_000, giveUp: false };
      expect(await turn(f, ({ retry }) => ({ kind: 'deferred', requested: true, status: 500, retryAfterMs: 1000, retry, robotsUnreachable: plan }))).toBe(true);
      const waiting = await f.aside.listWaiting();
      expect(waiting).toMatchObject({
        count: 1,
        hosts: [{ host: 'a.test', tries, status: 500, nextTryAt: new Date(plan.nextTryAt).toISOString(), giveUpAt: new Date(since + 60_000).toISOString() }],
      });
    }
    const giveUp = { since, tries: 5, nextTryAt: Date.now(), giveUpAt: since + 60_000, giveUp: true };
    await turn(f, ({ retry }) => ({ kind: 'deferred', requested: true, status: 500, retryAfterMs: 0, retry, robotsUnreachable: giveUp }));
    expect((await f.store.stats()).size).toBe(0);
    expect(await f.aside.listWaiting()).toEqual({ count: 0, hosts: [] });
    expect(await f.aside.listSetAside()).toEqual([expect.objectContaining({ host: 'a.test', reason: 'robots-unreachable', urls: 3 })]);
    // Links to it found later are dropped on arrival, and counted with it.
    await f.service.add(links('a.test', ['/4', '/5']));
    expect((await f.store.stats()).size).toBe(0);
    expect(await f.aside.listSetAside()).toEqual([expect.objectContaining({ urls: 5 })]);
    expect(await f.stats.totals()).toMatchObject({ 'set-aside.robots-unreachable': 5, 'hosts-set-aside.robots-unreachable': 1 });
  });

  it('gives up waiting hosts early when told (the embedded crawl, nothing else left), naming the last failure; a URL still out is dropped with them', async () => {
    const f = frontier();
    await f.service.add(links('a.test', ['/1', '/2', '/3']));
    const since = Date.now() - 5000;
    const plan = { since, tries: 2, nextTryAt: Date.now() + 60_000, giveUpAt: since + 1_800_000, giveUp: false };
    const refused = {
      kind: 'deferred' as const,
      requested: true,
      error: 'connect ECONNREFUSED 127.0.0.1:9',
      errorKind: 'refused' as const,
      retryAfterMs: 60_000,
      robotsUnreachable: plan,
    };
    await turn(f, ({ retry }) => ({ ...refused, retry }));
    const { hosts } = await f.aside.listWaiting();
    expect(hosts).toEqual([expect.objectContaining({ host: 'a.test', errorKind: 'refused' })]);
    // One URL is out when the crawl gives the host up; its outcome comes back after.
    const [claim] = await f.store.claim({ now: Date.now() + 10 * 60_000, max: 1, leaseMs: 60_000 });
    await f.service.giveUpWaiting(hosts, 120_000);
    await f.service.done({
      v: 1,
      leaseId: claim.leaseId,
      fetchId: 'f',
      url: 'http://a.test/2',
      host: 'a.test',
      durationMs: 0,
      retry: decodeEntry(claim.item),
      ...refused,
    });
    expect(await f.store.stats()).toMatchObject({ size: 0, scheduled: 0 });
    expect(await f.aside.listWaiting()).toEqual({ count: 0, hosts: [] });
    expect(await f.aside.listSetAside()).toEqual([
      expect.objectContaining({
        host: 'a.test',
        reason: 'robots-unreachable',
        urls: 3,
        detail: expect.stringMatching(
          /^robots\.txt unreachable for 5 s \(2 tries, last connection refused \(connect ECONNREFUSED 127\.0\.0\.1:9\)\); given up after .* 120 s \(CRAWL_ROBOTS_IDLE_WAIT_MS\)$/,
        ),
      }),
    ]);
    expect(await f.stats.totals()).toMatchObject({ 'set-aside.robots-unreachable': 3, 'hosts-set-aside.robots-unreachable': 1 });
  });

  it('sets aside a host whose Crawl-delay exceeds FRONTIER_MAX_CRAWL_DELAY_MS instead of waiting for it', async () => {
    const f = frontier();
    await f.service.add([...links('slow.test', ['/1', '/2', '/3']), ...links('ok.test', ['/1'])]);
    const hosts: string[] = [];
    while (
      await turn(
        f,
        ({ host, retry }) => (hosts.push(host), { kind: 'robots-fetched', requested: true, status: 200, crawlDelayMs: host === 'slow.test' ? 3_600_000 : 30_000, retry }),
      )
    ) {
      if (hosts.length > 10) break;
    }
    // ok.test (30 s, the limit itself) keeps its URL; slow.test had one turn, its robots.txt.
    expect(hosts.filter((h) => h === 'slow.test')).toHaveLength(1);
    expect((await f.store.hostInfo('ok.test')).queued + (await f.store.stats()).leased).toBe(1);
    expect(await f.aside.listSetAside()).toEqual([
      expect.objectContaining({ host: 'slow.test', reason: 'crawl-delay', urls: 3, detail: 'Crawl-delay 3600 s > FRONTIER_MAX_CRAWL_DELAY_MS 30 s' }),
    ]);
    expect(await f.stats.totals()).toMatchObject({ 'set-aside.crawl-delay': 3, 'hosts-set-aside.crawl-delay': 1 });
  });

  it('backs off a host after FRONTIER_HOST_TIMEOUT_STRIKES URLs timed out in a row, keeps its URLs, lists it until it answers', async () => {
    const f = frontier();
    await f.service.add(links('slow.test', ['/1', '/2', '/3', '/4', '/5', '/6']));
    const timedOut = () => ({
      kind: 'error' as const,
      requested: true,
      error: 'ERR_FETCH_TOO_SLOW: body arrived at 1 B/s',
      errorKind: 'timeout-rate' as const,
      durationMs: 10_000,
    });
    for (let i = 0; i < 2; i++) await turn(f, timedOut);
    expect(await f.aside.listSetAside()).toEqual([]);
    const before = Date.now();
    await turn(f, timedOut);
    // Three timed out (failed URLs, as any error); the other three wait for the host's next turn, a minute on.
    const info = await f.store.hostInfo('slow.test');
    expect(info.queued).toBe(3);
    expect(info.nextAt).toBeGreaterThanOrEqual(before + 60_000);
    expect(info.politeness).toMatchObject({ timeouts: 3, cause: 'timeouts', delayMs: 60_000 });
    expect(await f.aside.listSetAside()).toEqual([
      expect.objectContaining({
        host: 'slow.test',
        reason: 'timeouts',
        urls: 3,
        until: new Date(info.nextAt!).toISOString(),
        detail: expect.stringMatching(/^3 URLs timed out in a row .*timeout-rate/),
      }),
    ]);
    // Unlike a host set aside for good, links to it found meanwhile are kept.
    await f.service.add(links('slow.test', ['/7']));
    expect((await f.store.hostInfo('slow.test')).queued).toBe(4);
    expect(await f.stats.totals()).toMatchObject({ 'hosts-backed-off.timeouts': 1 });
    // Its next turn answers: the strikes are forgiven and it is no longer listed.
    await turn(f, ({ retry }) => ({ kind: 'fetched', requested: true, status: 200, durationMs: 50, retry }));
    expect(await f.aside.listSetAside()).toEqual([]);
    expect((await f.store.hostInfo('slow.test')).politeness?.timeouts).toBeUndefined();
  });

  describe('recrawl intervals', () => {
    const recrawl = { 'frontier.recrawl': true, 'frontier.recrawlInitialMs': 64_000, 'frontier.recrawlMinMs': 1000, 'frontier.recrawlMaxMs': 512_000 };

    /**
     * Fetches a hub (a page whose every fetch yields a new URL, counted as URL-seen would) and a leaf (a
     * page that changes at every fetch and yields nothing new) four times each; answers each page's
     * recrawl intervals, as its next visits carried them.
     */
    async function visits(policy: 'adaptive' | 'hubs') {
      const f = frontier({ ...recrawl, 'frontier.recrawlPolicy': policy });
      await f.service.add([...links('hub.test', ['/']), ...links('leaf.test', ['/'])]);
      const intervals: Record<string, number[]> = { 'hub.test': [], 'leaf.test': [] };
      for (let round = 0; round < 4; round++) {
        await f.store.promoteDue(Date.now() + 10 * 60_000, 10);
        for (let i = 0; i < 2; i++) {
          await turn(f, ({ host, retry }) => {
            if (retry.revisit) intervals[host].push(retry.revisit.intervalMs);
            return { kind: 'fetched', requested: true, status: 200, durationMs: 3, retry, revisit: { changed: true, bodyHash: `h${round}` } };
          });
        }
        // The fetch's links reach URL-seen after its outcome reached the frontier.
        await f.hubLinks.record([{ referrer: 'http://hub.test/' }, ...(round === 0 ? [{ referrer: 'http://leaf.test/' }] : [])]);
      }
      return { intervals, totals: await f.stats.totals() };
    }

    it('takes a sitemap page’s first interval from its <changefreq> or <lastmod>, and never comes back before the end of its freshness lifetime', async () => {
      const f = frontier(recrawl);
      const now = Date.now();
      const sitemapLink = (path: string, listed: object) => ({ ...links('s.test', [path])[0], source: 'sitemap' as const, ...listed });
      await f.service.add([
        sitemapLink('/daily', { changefreq: 'daily' }),
        sitemapLink('/hour-old', { lastmod: now - 10_000 }),
        ...links('s.test', ['/plain', '/cached']),
      ]);
      for (let i = 0; i < 4; i++) {
        await turn(f, ({ retry }) => ({
          kind: 'fetched',
          requested: true,
          status: 200,
          durationMs: 3,
          retry,
          revisit: { changed: true, bodyHash: 'h', ...(retry.url.endsWith('/cached') ? { expiresAt: now + 3_600_000 } : {}) },
        }));
      }
      const audit = (await f.store.auditLog('s.test')).map((line) => JSON.parse(line)).filter((e) => e.event === 'recrawl-scheduled');
      const byPath = Object.fromEntries(audit.map((e) => [new URL(e.url).pathname, e]));
      expect(byPath['/daily'].intervalMs).toBe(512_000); // a day, within FRONTIER_RECRAWL_MAX_MS
      expect(byPath['/hour-old'].intervalMs).toBeGreaterThanOrEqual(10_000);
      expect(byPath['/hour-old'].intervalMs).toBeLessThan(15_000);
      expect(byPath['/plain'].intervalMs).toBe(64_000); // FRONTIER_RECRAWL_INITIAL_MS
      expect(byPath['/cached']).toMatchObject({ intervalMs: 64_000, dueAt: now + 3_600_000 });
    });

    it('adaptive: a page that changes at every visit comes back ever sooner, hub or leaf', async () => {
      const { intervals } = await visits('adaptive');
      expect(intervals).toEqual({ 'hub.test': [64_000, 32_000, 16_000], 'leaf.test': [64_000, 32_000, 16_000] });
    });

    it('hubs: a page that keeps yielding new URLs comes back sooner; one that changes without new links is a leaf and comes back later', async () => {
      const { intervals, totals } = await visits('hubs');
      // The second visit takes the count's baseline (the first fetch's links are all new) and adapts as today.
      expect(intervals).toEqual({ 'hub.test': [64_000, 32_000, 16_000], 'leaf.test': [64_000, 32_000, 64_000] });
      expect(totals).toMatchObject({ 'frontier.recrawl-hub': 2, 'frontier.recrawl-leaf': 2 });
    });
  });
});
