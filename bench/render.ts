/**
 * What rendering a page costs, on this machine: the test web's script-built home page (`app-0.test`, a
 * bundle that fetches JSON and writes the links) rendered again and again by the render plugin's Renderer
 * (one browser, one context per page, sub-requests through the SubrequestGate to the local test web), one
 * page at a time. Printed per page: wall time; CPU time of the browser's processes (all of Chromium's, read
 * from /proc) and of this Node process (the gate and Playwright's side); then, over 10 more pages, memory: the browser's resident
 * set (PSS, summed over its processes) at its peak, and the added peak per context (peak minus the idle browser).
 * The last line is `BENCH_RESULT {json}`.
 *
 * Usage: npm run -s bench:render  (BENCH_RENDER_PAGES, default 40; PLUGIN_RENDER_CHROMIUM_PATH as the plugin)
 */
import { readdirSync, readFileSync } from 'node:fs';
import { BrowserPool, CHROMIUM_NAMES, findOnPath, Renderer, SubrequestGate } from '@crawler/plugin-render';
import { loadConfig } from '@crawler/config';
import { CachedResolver, ResolverEvents } from '@crawler/net';
import { MemoryFrontierStore } from '@crawler/frontier-store';
import { RobotsCache } from '@crawler/robots';
import { MemoryStateStore } from '@crawler/state';
import { PortPolicy } from '@crawler/url';
import { SCRIPTED_HOME } from '../test/web/dedicated-hosts';
import { TestWeb } from '../test/web/test-web';
import { printBenchResult } from './report/bench-result';

const PAGES = Number(process.env.BENCH_RENDER_PAGES || 40);
const TICK_MS = 1000 / 100; // USER_HZ: /proc reports CPU time in ticks of 10 ms on Linux

/** The process and all its descendants. */
function tree(root: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      children.set(ppid, [...(children.get(ppid) ?? []), Number(entry)]);
    } catch {
      // gone meanwhile
    }
  }
  const out: number[] = [];
  const walk = (pid: number) => {
    out.push(pid);
    for (const child of children.get(pid) ?? []) walk(child);
  };
  walk(root);
  return out;
}

/** CPU ms and resident bytes of the process tree under `root` (exited children's CPU included: cutime, cstime). */
function usage(root: number): { cpuMs: number; rssBytes: number } {
  let cpu = 0;
  let rss = 0;
  for (const pid of tree(root)) {
    try {
      const fields = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const f = fields.slice(fields.lastIndexOf(')') + 2).split(' ');
      cpu += Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14]);
      // PSS, not RSS: Chromium's processes share most of their pages, which RSS would count once per process.
      const rollup = readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
      rss += Number(/^Pss:\s+(\d+)/m.exec(rollup)?.[1] ?? 0) * 1024;
    } catch {
      // gone meanwhile
    }
  }
  return { cpuMs: cpu * TICK_MS, rssBytes: rss };
}

/** The crawl's resolver, its events counted nowhere. */
const QUIET: ResolverEvents = { count: async () => undefined, lookup: () => undefined, refresh: () => undefined, warn: () => undefined };

async function main() {
  const chromiumPath = process.env.PLUGIN_RENDER_CHROMIUM_PATH || findOnPath(CHROMIUM_NAMES);
  if (!chromiumPath) throw new Error('no Chromium on PATH: apt-get install chromium, or set PLUGIN_RENDER_CHROMIUM_PATH');
  const web = await TestWeb.start({ hosts: 12, scripted: true });
  const pool = new BrowserPool({ chromiumPath, contexts: 1, maxHeapMb: 256 });
  try {
    await pool.start();
    const gate = new SubrequestGate({
      resolver: new CachedResolver(new MemoryStateStore(), loadConfig({}, { 'dns.allowPrivate': true, 'dns.hosts': { 'app-0.test': '127.0.0.1' } }).dns, QUIET),
      ports: new PortPolicy(),
      userAgent: 'RenderBench/1.0',
      maxBytes: 1 << 20,
      robots: new RobotsCache(new MemoryStateStore()),
      onRobots: () => undefined,
      robotsTtlMs: 3_600_000,
      robotsMaxBytes: 512_000,
      // Politeness off, as before turns were the frontier's: the bench measures rendering, not waiting.
      frontier: new MemoryFrontierStore({ frontQueues: 1, backQueues: 1, priorityBias: 2, auditLength: 1, perHostLimit: 100, perIpLimit: 100, perIpIntervalMs: 0 }),
      turnLeaseMs: 15_000,
      politeness: { minDelayMs: 0, delayMultiplier: 0, recentResponses: 5, maxBackoffMs: 3_600_000, allowDelayBelowMin: false },
      maxRedirects: 5,
    });
    const renderer = new Renderer(pool, gate, { timeoutMs: 15_000, settleMs: 500, blockTypes: ['image', 'font', 'media'], maxSubrequests: 100 });
    const home = web.expected.scripted[0];
    const doc = { url: home, status: 200, contentType: 'text/html; charset=utf-8', body: Buffer.from(SCRIPTED_HOME) };
    await renderer.render(doc); // warm-up: robots.txt cached, code paths compiled
    const pid = pool.pid()!;
    // Time and CPU first, with nothing else running in this process.
    const before = { browser: usage(pid).cpuMs, node: process.cpuUsage() };
    const started = performance.now();
    let rendered = 0;
    for (let i = 0; i < PAGES; i++) if ((await renderer.render(doc)).kind === 'rendered') rendered++;
    const wallMs = performance.now() - started;
    const browserCpuMs = usage(pid).cpuMs - before.browser;
    const nodeCpu = process.cpuUsage(before.node);
    const nodeCpuMs = (nodeCpu.user + nodeCpu.system) / 1000;
    // Then memory, sampled every 100 ms over a few more pages (reading /proc is not free).
    const idle = usage(pid).rssBytes;
    let peak = idle;
    const sampler = setInterval(() => (peak = Math.max(peak, usage(pid).rssBytes)), 100);
    for (let i = 0; i < Math.min(PAGES, 10); i++) await renderer.render(doc);
    clearInterval(sampler);
    const result = {
      pages: PAGES,
      rendered,
      wallMsPerPage: +(wallMs / PAGES).toFixed(1),
      browserCpuMsPerPage: +(browserCpuMs / PAGES).toFixed(1),
      nodeCpuMsPerPage: +(nodeCpuMs / PAGES).toFixed(1),
      browserIdleRssMb: +(idle / 2 ** 20).toFixed(0),
      browserPeakRssMb: +(peak / 2 ** 20).toFixed(0),
      addedPeakRssMbPerContext: +((peak - idle) / 2 ** 20).toFixed(0),
    };
    console.log(`rendered ${rendered}/${PAGES} pages, one at a time`);
    console.log(`wall ${result.wallMsPerPage} ms/page; CPU: Chromium ${result.browserCpuMsPerPage} ms/page, Node ${result.nodeCpuMsPerPage} ms/page`);
    console.log(
      `memory: browser idle ${result.browserIdleRssMb} MB PSS, peak ${result.browserPeakRssMb} MB (+${result.addedPeakRssMbPerContext} MB for a context rendering)`,
    );
    printBenchResult('render', [
      { id: 'render.wall-ms-per-page', label: 'render: wall time per page', value: result.wallMsPerPage, unit: 'ms' },
      { id: 'render.browser-cpu-ms-per-page', label: 'render: Chromium CPU per page', value: result.browserCpuMsPerPage, unit: 'ms' },
      { id: 'render.node-cpu-ms-per-page', label: 'render: Node CPU per page', value: result.nodeCpuMsPerPage, unit: 'ms' },
      { id: 'render.browser-idle-rss-mb', label: 'render: idle browser PSS', value: result.browserIdleRssMb, unit: 'MB' },
      { id: 'render.added-rss-mb-per-context', label: 'render: added peak PSS per rendering context', value: result.addedPeakRssMbPerContext, unit: 'MB' },
    ]);
  } finally {
    await pool.close();
    await web.close();
  }
}

void main().catch((error) => {
  console.error(error);
  process.exit(1);
});
