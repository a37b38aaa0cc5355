import { CHART_COLORS } from './dashboard.style';

/**
 * The live dashboard: one page (inline SVG, its script and style sheet from the control plane's own origin,
 * nothing from a CDN, so it works on a machine without internet).
 *
 * Layout of the diagram (the classic one): top row filter → seen → frontier → DNS → downloader, the
 * downloader down to the parser, bottom row back leftwards parser → content seen → extractor, the extractor
 * up to the filter; content storage under content seen, and frontier-done curving from the downloader back
 * to the frontier. Boxes carry what a stage turns out (total and per second); arrows carry the queue
 * between two stages (jobs waiting, running or delayed).
 */

const W = 150;
const H = 74;
const COL = [30, 250, 470, 690, 910];
const TOP = 80;
const BOTTOM = 270;
const STORE_Y = 400;

interface Box {
  id: string;
  label: string;
  x: number;
  y: number;
  kind?: 'store';
}

const BOXES: Box[] = [
  { id: 'url-filter', label: 'URL Filter', x: COL[0], y: TOP },
  { id: 'url-seen', label: 'URL Seen?', x: COL[1], y: TOP },
  { id: 'frontier', label: 'URL Frontier', x: COL[2], y: TOP },
  { id: 'dns-resolver', label: 'DNS Resolver', x: COL[3], y: TOP },
  { id: 'downloader', label: 'Downloader', x: COL[4], y: TOP },
  { id: 'content-parser', label: 'Content Parser', x: COL[4], y: BOTTOM },
  { id: 'content-seen', label: 'Content Seen?', x: COL[3] - 80, y: BOTTOM },
  { id: 'url-extractor', label: 'URL Extractor', x: COL[1], y: BOTTOM },
  { id: 'storage', label: 'Content Storage', x: COL[3] - 80, y: STORE_Y, kind: 'store' },
];

interface Arrow {
  /** The queue on the arrow (or a pseudo id for seeds / storage). */
  id: string;
  path: string;
  /** Where its depth goes, and its queue's name (default: just under the depth). */
  lx: number;
  ly: number;
  qy?: number;
}

const cx = (b: Box) => b.x + W / 2;
const cy = (b: Box) => b.y + H / 2;
const box = (id: string) => BOXES.find((b) => b.id === id)!;

function right(from: string, to: string, id: string): Arrow {
  const a = box(from);
  const b = box(to);
  return { id, path: `M${a.x + W},${cy(a)} H${b.x - 4}`, lx: (a.x + W + b.x) / 2, ly: cy(a) - 8, qy: cy(a) + 16 };
}

function left(from: string, to: string, id: string): Arrow {
  const a = box(from);
  const b = box(to);
  return { id, path: `M${a.x},${cy(a)} H${b.x + W + 4}`, lx: (a.x + b.x + W) / 2, ly: cy(a) - 8, qy: cy(a) + 16 };
}

const ARROWS: Arrow[] = [
  { id: 'seeds', path: `M${cx(box('url-filter'))},${TOP - 34} V${TOP - 4}`, lx: cx(box('url-filter')) + 40, ly: TOP - 16 },
  right('url-filter', 'url-seen', 'seen-urls'),
  right('url-seen', 'frontier', 'frontier-add'),
  right('frontier', 'dns-resolver', 'dns-resolve'),
  right('dns-resolver', 'downloader', 'fetch'),
  { id: 'parse', path: `M${cx(box('downloader'))},${TOP + H} V${BOTTOM - 4}`, lx: cx(box('downloader')) + 44, ly: (TOP + H + BOTTOM) / 2 },
  left('content-parser', 'content-seen', 'content-seen'),
  left('content-seen', 'url-extractor', 'extract-links'),
  {
    id: 'filter-urls',
    path: `M${box('url-extractor').x},${cy(box('url-extractor'))} H${cx(box('url-filter'))} V${TOP + H + 4}`,
    lx: cx(box('url-filter')) + 44,
    ly: (TOP + H + BOTTOM) / 2 + 20,
  },
  { id: 'stored', path: `M${cx(box('content-seen'))},${BOTTOM + H} V${STORE_Y - 4}`, lx: cx(box('content-seen')) + 44, ly: (BOTTOM + H + STORE_Y) / 2 + 4 },
  {
    id: 'frontier-done',
    path: `M${cx(box('downloader'))},${TOP} C${cx(box('downloader'))},${TOP - 60} ${cx(box('frontier')) + 30},${TOP - 60} ${cx(box('frontier')) + 30},${TOP - 4}`,
    lx: (cx(box('downloader')) + cx(box('frontier'))) / 2 + 15,
    ly: TOP - 66,
    qy: TOP - 54,
  },
];

const ARROW_NAMES: Record<string, string> = { seeds: 'seeds', stored: 'stored' };

function diagram(): string {
  const boxes = BOXES.map(
    (b) => `
    <g class="box${b.kind === 'store' ? ' store' : ''}" id="box-${b.id}" data-stage="${b.id}">
      <rect x="${b.x}" y="${b.y}" width="${W}" height="${H}" rx="${b.kind === 'store' ? 18 : 8}"/>
      <text class="label" x="${cx(b)}" y="${b.y + 20}">${b.label}</text>
      <text class="total" x="${cx(b)}" y="${b.y + 42}">–</text>
      <text class="rate" x="${cx(b)}" y="${b.y + 62}">–</text>
    </g>`,
  ).join('');
  const arrows = ARROWS.map(
    (a) => `
    <g class="arrow" id="arrow-${a.id}" data-queue="${a.id}">
      <path d="${a.path}" marker-end="url(#head)"/>
      <text class="depth" x="${a.lx}" y="${a.ly}">–</text>
      <text class="queue" x="${a.lx}" y="${a.qy ?? a.ly + 12}">${ARROW_NAMES[a.id] ?? a.id}</text>
    </g>`,
  ).join('');
  return `<svg id="pipeline" viewBox="0 0 1090 ${STORE_Y + H + 10}" role="img" aria-label="Pipeline diagram with live counts">
    <defs><marker id="head" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z"/></marker></defs>
    ${arrows}${boxes}
  </svg>`;
}

export const DASHBOARD_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Crawler · control plane</title>
<link rel="stylesheet" href="dashboard.css">
</head>
<body>
<header>
  <h1>Crawler control plane</h1>
  <span id="state" class="badge">…</span>
  <button id="pause-button" type="button" data-action="pause">Pause</button>
  <span id="pause-note" class="muted"></span>
  <span class="spacer"></span>
  <form id="token-form" hidden><span id="token-note" class="bad"></span><input id="token-input" type="password" autocomplete="off" placeholder="control plane token" aria-label="control plane token"> <button type="submit">Use token</button></form>
  <span id="connection"></span>
  <span id="outages" class="bad"></span>
  <span id="updated" class="muted"></span>
</header>
<main>
  <section class="wide">
    <div class="totals">
      <div>fetched<b id="total-fetched">–</b></div>
      <div>fetch rate<b id="rate-fetched">–</b></div>
      <div>stored<b id="total-stored">–</b></div>
      <div>duplicates<b id="total-duplicates">–</b></div>
      <div>errors<b id="total-errors">–</b></div>
      <div>URLs in frontier<b id="total-frontier">–</b></div>
      <div>in flight<b id="total-inflight">–</b></div>
      <div>downloaders<b id="total-downloaders">–</b></div>
    </div>
  </section>
  <section class="wide">
    <h2>Pipeline <span class="muted">boxes: output, total and per second · arrows: jobs in the queue between two stages</span></h2>
    ${diagram()}
  </section>
  <section class="wide">
    <h2>Throughput <span class="muted">per sample period</span></h2>
    <svg id="chart" viewBox="0 0 1060 200">
      <line class="axis" x1="44" y1="178" x2="1050" y2="178"/><line class="axis" x1="44" y1="10" x2="44" y2="178"/>
      <line class="axis" x1="44" y1="94" x2="1050" y2="94" stroke-dasharray="3 4"/>
      <text class="ymax" x="40" y="16" text-anchor="end">–</text><text class="ymid" x="40" y="98" text-anchor="end">–</text>
      <text x="40" y="182" text-anchor="end">0</text><text class="tspan" x="1050" y="195" text-anchor="end">waiting for samples…</text>
      ${Object.entries(CHART_COLORS)
        .map(([key, color]) => `<polyline data-series="${key}" stroke="${color}" points=""/>`)
        .join('')}
    </svg>
    <div class="legend">${Object.entries(CHART_COLORS)
      .map(([key]) => `<span><i class="${key}"></i>${key === 'links' ? 'links extracted/s ÷ 10' : `pages ${key === 'errors' ? 'in error' : key}/s`}</span>`)
      .join('')}</div>
  </section>
  <section>
    <h2>Top hosts <span class="muted">by share of the last 1000 requests</span></h2>
    <div class="scroll"><table id="top-hosts"><thead><tr><th>host</th><th>recent</th><th>fetched</th><th>queued</th><th>delay</th></tr></thead><tbody></tbody></table></div>
    <p id="top-hosts-empty" class="muted"></p>
  </section>
  <section id="below-floor" class="wide warn" hidden>
    <h2>Hosts below the politeness floor <span class="muted">operator overrides under FRONTIER_MIN_DELAY_MS (FRONTIER_ALLOW_DELAY_BELOW_MIN)</span></h2>
    <div class="scroll"><table><thead><tr><th>host</th><th>delay</th><th>floor</th></tr></thead><tbody></tbody></table></div>
  </section>
  <section id="hosts-aside" class="wide warn" hidden>
    <h2>Hosts waiting or left behind <span class="muted">robots.txt failing (DOWNLOADER_ROBOTS_UNREACHABLE_MAX_MS), given up, or backed off for timeouts</span></h2>
    <p id="hosts-aside-note" class="muted"></p>
    <div class="scroll"><table><thead><tr><th>host</th><th>state</th><th>URLs</th><th>why</th></tr></thead><tbody></tbody></table></div>
  </section>
  <section>
    <h2>Recent errors <span class="muted">last 50</span></h2>
    <div class="scroll"><table id="recent-errors"><thead><tr><th>time</th><th>kind</th><th>URL</th><th>error</th></tr></thead><tbody></tbody></table></div>
    <p id="recent-errors-empty" class="muted"></p>
  </section>
  <section>
    <h2>Submit seeds</h2>
    <form id="seed-form">
      <textarea id="seed-urls" name="urls" rows="3" placeholder="one URL or domain a line: https://example.com/ or example.org"></textarea>
      <p><button type="submit">Submit seeds</button> <span id="seed-result"></span></p>
    </form>
  </section>
  <section>
    <h2>Look up a URL</h2>
    <form id="lookup-form">
      <input id="lookup-url" type="url" placeholder="https://example.com/page">
      <p><button type="submit">Look up</button> <a id="lookup-content" hidden target="_blank" rel="noopener">stored content</a></p>
    </form>
    <pre id="lookup-result"></pre>
  </section>
</main>
<script src="dashboard.js"></script>
</body>
</html>
`;
