import type { ScaleCheck } from './scale-checks';
import { slowestEndpoints } from './scale-checks';
import type { ScaleSample, ShapeRun } from './scale-sample';
import type { ScaleSettings } from './scale-settings';

export interface ScaleResults {
  at: string;
  machine: { cpus: number; model: string; memoryBytes: number };
  settings: Omit<ScaleSettings, 'out'>;
  runs: ShapeRun[];
  checks: ScaleCheck[];
}

/**
 * The results of a run of some shapes, over those of an earlier run of the same web and crawl settings in the
 * same directory: a small machine runs one shape at a time (each takes most of an afternoon at 10⁶ pages),
 * and the report shows both. A shape run now replaces its earlier run; an earlier run of other settings is
 * dropped whole, with the reason returned.
 */
export function mergeScaleResults(earlier: ScaleResults | undefined, now: ScaleResults): { results: ScaleResults; dropped?: string } {
  if (!earlier) return { results: now };
  const { shapes: _a, ...earlierWeb } = earlier.settings;
  const { shapes: _b, ...nowWeb } = now.settings;
  if (JSON.stringify(earlierWeb) !== JSON.stringify(nowWeb)) return { results: now, dropped: `the earlier results (${earlier.at}) are of other settings` };
  const kept = (shape: string) => !now.settings.shapes.includes(shape as ShapeRun['shape']);
  const runs = [...earlier.runs.filter((r) => kept(r.shape)), ...now.runs];
  return {
    results: {
      ...now,
      settings: { ...now.settings, shapes: runs.map((r) => r.shape) },
      runs,
      checks: [...earlier.checks.filter((c) => kept(c.shape)), ...now.checks],
    },
  };
}

const mib = (b: number | null | undefined) => (b === null || b === undefined ? '—' : (b / 2 ** 20).toFixed(0));
const perPage = (bytes: number | null | undefined, pages: number) => (bytes === null || bytes === undefined || !pages ? '—' : (bytes / pages).toFixed(0));

/** bench/results/scale.md: the targets checked, then each shape's curves as tables. */
export function scaleMarkdown(r: ScaleResults): string {
  const s = r.settings;
  const lines = [
    `# Scale: ${s.pages.toLocaleString('en')} pages over ${s.hosts.toLocaleString('en')} hosts`,
    '',
    `${r.at}; ${r.machine.cpus} CPUs (${r.machine.model}), ${(r.machine.memoryBytes / 2 ** 30).toFixed(0)} GiB. ` +
      `The web: ${s.hosts} hosts × ${s.pagesPerHost} pages, ${s.sharedPerMille / 10}% of the hosts behind ${s.sharedAddresses} shared addresses, the rest on one each; ` +
      `${s.crawlDelayHosts} hosts with Crawl-delay: 1; median page ${s.pageKb} KB; ${s.latencyMs} ms think time. Delay ${s.delayMs} ms; sampled every ${s.sampleMs / 1000} s` +
      `${s.killAt !== undefined ? `; every crawler process killed (SIGKILL) at ${s.killAt * 100}% and started again` : ''}; extra env ${JSON.stringify(s.env)}.`,
    '',
    '![pages/s and RSS against pages fetched](scale.svg)',
    '',
    '## Targets',
    '',
    '| shape | target | result | measured |',
    '|---|---|---|---|',
    ...r.checks.map((c) => `| ${c.shape} | ${c.name} | ${c.pass ? 'PASS' : '**FAIL**'} | ${c.detail} |`),
    '',
  ];
  for (const run of r.runs) lines.push(...shapeSection(run));
  return `${lines.join('\n')}\n`;
}

function shapeSection(run: ShapeRun): string[] {
  const last = run.samples[run.samples.length - 1];
  const pages = last?.pagesFetched ?? 0;
  const names = Object.keys(run.samples[0]?.processes ?? {});
  const slowest = slowestEndpoints(run.samples);
  const lines = [
    `## ${run.shape}`,
    '',
    `${run.complete ? 'Complete' : 'NOT complete'}: ${pages.toLocaleString('en')} pages in ${(run.seconds / 60).toFixed(1)} min (${(pages / Math.max(1, run.seconds)).toFixed(1)} pages/s over the run). ${run.notes.join('; ')}`,
    '',
    `Per page at the end: PostgreSQL ${perPage(last?.postgresBytes, pages)} B, bodies stored ${perPage(last?.storeBytes, pages)} B` +
      (last?.redis.length
        ? `, Redis (keys that do not expire) ${perPage(
            last.redis.reduce((n, m) => n + m.lastingBytes, 0),
            pages,
          )} B, Redis (keys that expire) ${perPage(
            last.redis.reduce((n, m) => n + m.expiringBytes, 0),
            pages,
          )} B`
        : '') +
      '.',
    '',
    `The web saw ${run.web.requests.toLocaleString('en')} requests (${run.web.robotsRequests} for robots.txt), ${run.web.pagesServed.toLocaleString('en')} pages served; by status ${JSON.stringify(run.web.byStatus)}; ${run.web.otherRequests} for paths it does not have; at most ${run.web.maxInFlight} in flight.`,
    '',
  ];
  if (run.resume) {
    const r = run.resume;
    lines.push(
      `Killed at ${(r.killedAt * 100).toFixed(0)}% (${r.pagesAtKill} pages, ${r.inFlightAtKill} URLs in flight), started again in ${r.restartSeconds} s; ` +
        `back to ≥ 0.9 × the ${r.rateBeforeKill.toFixed(1)} pages/s before the kill ${r.secondsToFullSpeed === null ? 'never' : `after ${r.secondsToFullSpeed} s`}.`,
      '',
    );
  }
  if (Object.keys(slowest).length) {
    lines.push(
      'Control plane, slowest answer over the samples (ms): ' +
        Object.entries(slowest)
          .map(([n, ms]) => `${n} ${ms ?? 'failed'}`)
          .join(', ') +
        '.',
      '',
    );
  }
  lines.push(
    `| s | pages | pages/s | requests/s | ${names.map((n) => `${n} RSS / heap MiB, CPU, loop p99 ms`).join(' | ')} | Redis used (MiB, per master) | Redis lasting MiB | PostgreSQL MiB | bodies MiB | frontier queued / hosts | dispatch late p50 / p99 ms |`,
    `|---|---|---|---|${names.map(() => '---|').join('')}---|---|---|---|---|---|`,
    ...run.samples.map((s, i) => sampleRow(s, run.samples[i - 1], names)),
    '',
  );
  return lines;
}

function sampleRow(s: ScaleSample, before: ScaleSample | undefined, names: string[]): string {
  const proc = names.map((n) => {
    const p = s.processes[n];
    return p ? `${mib(p.rssBytes)} / ${mib(p.heapUsedBytes)}, ${p.cpuCores.toFixed(2)}, ${p.eventLoopP99Ms ?? '—'}` : '—';
  });
  const used = s.redis.map((m) => mib(m.usedMemoryBytes)).join(' / ') || '—';
  const lasting = s.redis.length ? mib(s.redis.reduce((n, m) => n + m.lastingBytes, 0)) : '—';
  const frontier = s.frontierQueued === null ? '—' : `${s.frontierQueued} / ${s.frontierHosts}`;
  const dispatch = s.dispatchP99Ms === null ? '—' : `${s.dispatchP50Ms} / ${s.dispatchP99Ms}`;
  return `| ${s.seconds.toFixed(0)} | ${s.pagesFetched} | ${s.pagesPerSecond.toFixed(1)} | ${requestsPerSecond(s, before).toFixed(1)} | ${proc.join(' | ')} | ${used} | ${lasting} | ${mib(s.postgresBytes)} | ${mib(s.storeBytes)} | ${frontier} | ${dispatch} |`;
}

/** Requests the web answered per second over the interval since the sample before (0 for the first). */
function requestsPerSecond(s: ScaleSample, before: ScaleSample | undefined): number {
  return before && s.seconds > before.seconds ? (s.requests - before.requests) / (s.seconds - before.seconds) : 0;
}

const WIDTH = 900;
const PANEL = 260;
const LEFT = 70;
const RIGHT = 180;
const COLOURS: Record<string, string[]> = {
  embedded: ['#2563eb', '#93c5fd'],
  distributed: ['#dc2626', '#ea580c', '#d97706', '#65a30d', '#059669', '#0891b2', '#7c3aed', '#db2777', '#475569', '#a16207'],
};

/** scale.svg: pages/s and requests/s, then each process's RSS, against pages fetched; one line a shape (a process). No scripts. */
export function scaleChart(r: ScaleResults): string {
  const rate = r.runs.flatMap((run) => [
    {
      label: `${run.shape} pages/s`,
      colour: COLOURS[run.shape][0],
      points: run.samples.slice(1).map((s) => [s.pagesFetched, s.pagesPerSecond] as const),
    },
    {
      label: `${run.shape} requests/s`,
      colour: COLOURS[run.shape][1] ?? '#93c5fd',
      points: run.samples.slice(1).map((s, i) => [s.pagesFetched, requestsPerSecond(s, run.samples[i])] as const),
    },
  ]);
  const rss = r.runs.flatMap((run) =>
    Object.keys(run.samples[0]?.processes ?? {}).map((name, i) => ({
      label: run.shape === 'embedded' ? 'embedded' : name,
      colour: COLOURS[run.shape][i % COLOURS[run.shape].length],
      points: run.samples.filter((s) => (s.processes[name]?.rssBytes ?? 0) > 0).map((s) => [s.pagesFetched, s.processes[name].rssBytes / 2 ** 20] as const),
    })),
  );
  const height = 60 + 2 * (PANEL + 50);
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${height}" viewBox="0 0 ${WIDTH} ${height}" font-family="system-ui, sans-serif" fill="#0f172a">`,
    `<rect width="${WIDTH}" height="${height}" fill="#ffffff"/>`,
    `<text x="16" y="24" font-size="18" font-weight="600">Scale: ${r.settings.pages.toLocaleString('en')} pages over ${r.settings.hosts.toLocaleString('en')} hosts</text>`,
    `<text x="16" y="42" font-size="11" fill="#475569">${xml(`${r.machine.cpus} CPUs, ${r.machine.model}; ${r.at}`)}</text>`,
    panel('Pages and requests per second against pages fetched', rate, 60, r.settings.pages),
    panel('RSS (MiB) of each process against pages fetched', rss, 60 + PANEL + 50, r.settings.pages),
    '</svg>',
    '',
  ].join('\n');
}

type Series = { label: string; colour: string; points: (readonly [number, number])[] };

function panel(title: string, series: Series[], top: number, maxX: number): string {
  const maxY = Math.max(1, ...series.flatMap((s) => s.points.map(([, y]) => y))) * 1.1;
  const plotW = WIDTH - LEFT - RIGHT;
  const plotTop = top + 30;
  const plotH = PANEL - 30;
  const x = (v: number) => LEFT + (v / Math.max(1, maxX)) * plotW;
  const y = (v: number) => plotTop + plotH - (v / maxY) * plotH;
  const ticks = [0, 0.25, 0.5, 0.75, 1];
  return [
    `<g>`,
    `<text x="16" y="${top + 18}" font-size="14" font-weight="600">${xml(title)}</text>`,
    `<rect x="${LEFT}" y="${plotTop}" width="${plotW}" height="${plotH}" fill="none" stroke="#cbd5e1"/>`,
    ...ticks.map((t) => `<text x="${LEFT - 6}" y="${(y(t * maxY) + 4).toFixed(1)}" font-size="10" text-anchor="end">${(t * maxY).toFixed(maxY < 10 ? 1 : 0)}</text>`),
    ...ticks.map(
      (t) => `<text x="${x(t * maxX).toFixed(1)}" y="${plotTop + plotH + 14}" font-size="10" text-anchor="middle">${Math.round(t * maxX).toLocaleString('en')}</text>`,
    ),
    ...series.map((s, i) => {
      if (!s.points.length) return '';
      const path = s.points.map(([px, py], j) => `${j ? 'L' : 'M'}${x(px).toFixed(1)},${y(py).toFixed(1)}`).join(' ');
      return `<path d="${path}" fill="none" stroke="${s.colour}" stroke-width="1.6"/><text x="${WIDTH - RIGHT + 8}" y="${plotTop + 12 + i * 14}" font-size="11" fill="${s.colour}">${xml(s.label)}</text>`;
    }),
    `</g>`,
  ].join('\n');
}

function xml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}
