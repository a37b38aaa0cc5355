/**
 * The dashboard's pipeline diagram, an SVG put into the page (dashboard.html) where it says {{pipeline}}:
 * computed from the boxes' places, so that moving a box moves the arrows to and from it.
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

export function pipelineDiagram(): string {
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
