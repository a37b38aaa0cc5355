import { num } from './format';
import type { BenchResults, CrawlRun } from './results';

const WIDTH = 900;
const LABEL_WIDTH = 290;
const VALUE_WIDTH = 80;
const BAR_WIDTH = WIDTH - LABEL_WIDTH - VALUE_WIDTH - 20;
const ROW = 24;
const BAR = 16;
const PANEL_HEAD = 34;
const PANEL_GAP = 18;
const TITLE_HEIGHT = 80;
/** A generous mean advance of a 12 px sans-serif character, for laying out text an SVG cannot measure. */
const CHAR_WIDTH = 7;
const FONT = 'font-family="system-ui, -apple-system, Segoe UI, Helvetica, Arial, sans-serif"';

interface Panel {
  title: string;
  value: (run: CrawlRun) => number;
  /** Decimals on the bar labels; automatic when absent. */
  digits?: number;
}

const PANELS: Panel[] = [
  { title: 'Pages per second (more is better)', value: (r) => r.pagesPerSecond },
  { title: 'CPU ms per page, crawler processes (less is better)', value: (r) => r.cpuMsPerPage, digits: 2 },
  { title: 'Peak RSS, MiB, sum of the crawler’s processes (less is better)', value: (r) => r.peakRssBytes / 2 ** 20, digits: 0 },
];

/** Colour by contender, so that ours, the peer and the ceiling read apart in every panel; the first match wins. */
const KINDS = [
  { test: (id: string) => id.startsWith('polite-'), colour: '#94a3b8', name: 'polite runs (per-host delay)' },
  { test: (id: string) => id.startsWith('ours'), colour: '#2563eb', name: 'ours' },
  { test: (id: string) => id === 'ceiling', colour: '#16a34a', name: 'ceiling (fetch + parse only)' },
  { test: () => true, colour: '#f59e0b', name: 'peer' },
];
const kindOf = (run: CrawlRun) => KINDS.find((k) => k.test(run.id))!;

/** bench.svg: one horizontal bar per run in each of three panels, stacked; no dependencies, no scripts. */
export function renderChart(results: BenchResults): string {
  const runs = results.runs;
  const panelHeight = PANEL_HEAD + runs.length * ROW + PANEL_GAP;
  const height = TITLE_HEIGHT + PANELS.length * panelHeight;
  let x = 16;
  const legend = [...new Set(runs.map(kindOf))].map((k) => {
    const entry = `<rect class="legend" x="${x}" y="50" width="12" height="12" fill="${k.colour}"/><text x="${x + 18}" y="60" font-size="12">${xml(k.name)}</text>`;
    x += 18 + k.name.length * CHAR_WIDTH + 24;
    return entry;
  });
  const subtitle = `${results.machine.cpus} CPUs, ${results.machine.model}; ${num(results.web.hosts)} hosts × ${num(results.web.pagesPerHost)} pages; ${results.at}`;
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${height}" viewBox="0 0 ${WIDTH} ${height}" ${FONT} fill="#0f172a">`,
    `<rect x="0" y="0" width="${WIDTH}" height="${height}" fill="#ffffff"/>`,
    `<text x="16" y="24" font-size="18" font-weight="600">Crawl benchmark</text>`,
    `<text x="16" y="40" font-size="11" fill="#475569">${xml(subtitle)}</text>`,
    ...legend,
    ...PANELS.map((panel, i) => renderPanel(panel, runs, TITLE_HEIGHT + i * panelHeight)),
    '</svg>',
    '',
  ].join('\n');
}

function renderPanel(panel: Panel, runs: CrawlRun[], top: number): string {
  const values = runs.map(panel.value);
  const max = Math.max(0, ...values.filter(Number.isFinite));
  const rows = runs.map((run, i) => {
    const value = values[i];
    const width = max > 0 && Number.isFinite(value) ? Math.max(0, (value / max) * BAR_WIDTH) : 0;
    const y = top + PANEL_HEAD + i * ROW;
    const fits = Math.floor((LABEL_WIDTH - 16) / CHAR_WIDTH);
    const label = run.label.length > fits ? `${run.label.slice(0, fits - 1)}…` : run.label;
    return [
      `<text x="${LABEL_WIDTH - 8}" y="${y + BAR - 3}" font-size="12" text-anchor="end"><title>${xml(run.label)}</title>${xml(label)}</text>`,
      `<rect class="bar" x="${LABEL_WIDTH}" y="${y}" width="${width.toFixed(1)}" height="${BAR}" fill="${kindOf(run).colour}"/>`,
      `<text x="${(LABEL_WIDTH + width + 6).toFixed(1)}" y="${y + BAR - 3}" font-size="12">${xml(num(value, panel.digits))}</text>`,
    ].join('');
  });
  return [
    `<g>`,
    `<text x="16" y="${top + 20}" font-size="14" font-weight="600">${xml(panel.title)}</text>`,
    `<line x1="${LABEL_WIDTH}" y1="${top + PANEL_HEAD - 4}" x2="${LABEL_WIDTH}" y2="${top + PANEL_HEAD + runs.length * ROW - 4}" stroke="#cbd5e1"/>`,
    ...rows,
    `</g>`,
  ].join('\n');
}

function xml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&apos;');
}
