/**
 * The dashboard's script, served as `dashboard.js` from the control plane's own origin (the page's policy
 * allows no inline script). It polls `status` and `status/history` every two seconds with relative URLs
 * (so it also works behind a path prefix) and writes every crawled string with `textContent`, never as HTML.
 *
 * The shapes below are the parts of the control plane's answers this page reads, written out here because
 * this program is compiled for the browser on its own, without the server's sources.
 */

interface QueueCounts {
  waiting: number;
  active: number;
  delayed: number;
}

interface Stage {
  id: string;
  depth: number;
  unit: string;
  total: number;
  perSecond: number;
}

interface Status {
  complete: boolean;
  paused: boolean;
  drained: boolean;
  pause: { since?: string | null; reason?: string | null };
  stale: boolean;
  ageMs: number;
  outages?: { dependency: string; since: string; error: string }[];
  pending: number;
  frontier: number;
  inFlight: number;
  downloaders: number;
  queues: Record<string, QueueCounts>;
  totals: Record<string, number>;
  rates: Record<string, number>;
  stages: Stage[];
  topHosts: { host: string; recentRequests: number; fetched: number; queued: number; delayMs: number | null; delayCause: string | null }[];
  belowFloor?: { host: string; delayMs: number; minDelayMs: number }[];
  robotsWaiting?: { hosts: { host: string; status?: number; error?: string; tries: number; nextTryAt: string; giveUpAt: string }[] };
  waitingOnly: string | null;
  hostsSetAside?: { host: string; reason: string; urls: number; detail: string }[];
  recentErrors: { at: string; kind: string; status?: number; url: string; error?: string }[];
  at: string;
}

interface HistoryPoint {
  t: number;
  fetched: number;
  stored: number;
  links: number;
  errors: number;
}

type Series = 'fetched' | 'stored' | 'links' | 'errors';

/** The page's elements this script fills in: the page is the control plane's own, so a missing one is a bug in it, said at once. */
function $<E extends Element = HTMLElement>(selector: string, root: ParentNode = document): E {
  const element = root.querySelector<E>(selector);
  if (!element) throw new Error(`dashboard: no ${selector} on the page`);
  return element;
}

const fmt = (n: number | null | undefined): string => (n == null ? '–' : Number(n).toLocaleString('en-US', { maximumFractionDigits: n < 10 ? 1 : 0 }));
const time = (at: string | number): string => new Date(at).toLocaleTimeString();

const points: HistoryPoint[] = [];
let lastT = 0;

function cell(row: HTMLTableRowElement, text: string, cls?: string): void {
  const td = document.createElement('td');
  td.textContent = text;
  if (cls) td.className = cls;
  row.appendChild(td);
}

/** A table row for each item. */
function rows<T>(items: readonly T[], cells: (row: HTMLTableRowElement, item: T) => void): HTMLTableRowElement[] {
  return items.map((item) => {
    const row = document.createElement('tr');
    cells(row, item);
    return row;
  });
}

function renderStatus(s: Status): void {
  const outages = s.outages ?? [];
  const state = s.paused ? (s.drained ? 'paused' : 'pausing') : s.complete ? 'complete' : outages.length || s.stale ? 'degraded' : s.pending > 0 ? 'crawling' : 'idle';
  const down = outages.map((o) => `${o.dependency} unavailable since ${time(o.since)} (${o.error})`);
  if (s.stale) down.push(Date.parse(s.at) > 0 ? `figures from ${Math.round(s.ageMs / 1000)} s ago` : 'no figures yet');
  $('#outages').textContent = down.join(' · ');
  const badge = $('#state');
  badge.textContent = state;
  badge.className = `badge ${state}`;
  const pauseButton = $('#pause-button');
  pauseButton.textContent = s.paused ? 'Resume' : 'Pause';
  pauseButton.dataset.action = s.paused ? 'resume' : 'pause';
  $('#pause-note').textContent = s.paused ? `paused since ${s.pause.since || '?'}${s.pause.reason ? ` (${s.pause.reason})` : ''} · ${s.inFlight} in flight` : '';
  const t = s.totals;
  $('#total-fetched').textContent = fmt(t.fetched || 0);
  $('#total-stored').textContent = fmt(t.stored || 0);
  $('#total-duplicates').textContent = fmt((t.duplicate || 0) + (t['duplicate.near'] || 0));
  $('#total-errors').textContent = fmt(errorsOf(t));
  $('#total-frontier').textContent = fmt(s.frontier);
  $('#total-inflight').textContent = fmt(s.inFlight);
  $('#total-downloaders').textContent = fmt(s.downloaders);
  $('#rate-fetched').textContent = `${fmt(s.rates.fetched)}/s`;
  $('#updated').textContent = `updated ${time(s.at)}`;

  for (const stage of s.stages) {
    const g = document.getElementById(`box-${stage.id}`);
    if (!g) continue;
    $('.total', g).textContent = stage.id === 'frontier' ? `${fmt(s.frontier)} URLs · ${fmt(s.inFlight)} out` : `${fmt(stage.total)} ${stage.unit}`;
    $('.rate', g).textContent = `${fmt(stage.perSecond)} ${stage.id === 'downloader' ? 'pages' : stage.unit}/s`;
    g.classList.toggle('busy', stage.depth > 0 || stage.perSecond > 0);
  }
  $('#box-storage .total').textContent = `${fmt(t.stored || 0)} pages`;
  $('#box-storage .rate').textContent = `${fmt(s.rates.stored)} pages/s`;

  for (const [queue, c] of Object.entries(s.queues)) {
    const g = document.getElementById(`arrow-${queue}`);
    if (!g) continue;
    const depth = c.waiting + c.active + c.delayed;
    const label = $('.depth', g);
    label.textContent = fmt(depth);
    label.setAttribute('data-depth', String(depth));
    g.classList.toggle('busy', depth > 0);
  }
  $('#arrow-seeds .depth').textContent = fmt(t.seeds || 0);
  $('#arrow-stored .depth').textContent = `${fmt(s.rates.stored)}/s`;

  $('#top-hosts tbody').replaceChildren(
    ...rows(s.topHosts, (row, h) => {
      cell(row, h.host);
      cell(row, fmt(h.recentRequests), 'num');
      cell(row, fmt(h.fetched), 'num');
      cell(row, fmt(h.queued), 'num');
      cell(row, h.delayMs == null ? '–' : `${fmt(h.delayMs)} ms${h.delayCause ? ` (${h.delayCause})` : ''}`);
    }),
  );
  $('#top-hosts-empty').textContent = s.topHosts.length ? '' : 'no requests yet';

  const below = s.belowFloor ?? [];
  $('#below-floor').hidden = below.length === 0;
  $('#below-floor tbody').replaceChildren(
    ...rows(below, (row, b) => {
      cell(row, b.host);
      cell(row, `${fmt(b.delayMs)} ms`, 'num');
      cell(row, `${fmt(b.minDelayMs)} ms`, 'num');
    }),
  );

  // Hosts the crawl waits for (robots.txt failing) or gave up: the status's robotsWaiting and hostsSetAside.
  const waiting = s.robotsWaiting?.hosts ?? [];
  const aside = s.hostsSetAside ?? [];
  $('#hosts-aside').hidden = waiting.length + aside.length === 0;
  $('#hosts-aside-note').textContent = s.waitingOnly || '';
  $('#hosts-aside tbody').replaceChildren(
    ...rows(waiting, (row, w) => {
      cell(row, w.host);
      cell(row, 'waiting for robots.txt', 'nowrap');
      cell(row, '–', 'num');
      cell(row, `${w.status ? `answered ${w.status}` : w.error || 'unreachable'} · ${w.tries} tries · next ${time(w.nextTryAt)} · given up at ${time(w.giveUpAt)}`);
    }),
    ...rows(aside, (row, h) => {
      cell(row, h.host);
      cell(row, h.reason === 'timeouts' ? 'backed off: timeouts' : `set aside: ${h.reason}`, 'nowrap');
      cell(row, fmt(h.urls), 'num');
      cell(row, h.detail);
    }),
  );

  $('#recent-errors tbody').replaceChildren(
    ...rows(s.recentErrors, (row, e) => {
      cell(row, time(e.at), 'nowrap');
      cell(row, e.kind + (e.status ? ` ${e.status}` : ''), 'nowrap');
      cell(row, e.url, 'url');
      cell(row, e.error || '');
    }),
  );
  $('#recent-errors-empty').textContent = s.recentErrors.length ? '' : 'no errors';
}

function errorsOf(t: Record<string, number>): number {
  let n = (t['status.4xx'] || 0) + (t['status.5xx'] || 0);
  for (const [key, value] of Object.entries(t)) if (key.startsWith('error.')) n += value;
  return n;
}

/** Links are ten times as many as pages: drawn at a tenth (the legend says so) to share the pages' scale. */
const SERIES: { key: Series; scale: number }[] = [
  { key: 'fetched', scale: 1 },
  { key: 'stored', scale: 1 },
  { key: 'links', scale: 0.1 },
  { key: 'errors', scale: 1 },
];

function renderChart(): void {
  const svg = $<SVGSVGElement>('#chart');
  const w = 1060;
  const h = 200;
  const left = 44;
  const bottom = 22;
  const shown = points.slice(-300);
  let max = 1;
  for (const p of shown) for (const s of SERIES) max = Math.max(max, p[s.key] * s.scale);
  max = niceCeil(max);
  const t0 = shown.length ? shown[0].t : Date.now();
  const t1 = shown.length ? shown[shown.length - 1].t : t0 + 1;
  const span = Math.max(t1 - t0, 1);
  const x = (t: number) => left + ((t - t0) / span) * (w - left - 10);
  const y = (v: number) => h - bottom - (v / max) * (h - bottom - 10);
  for (const s of SERIES) {
    const line = $<SVGPolylineElement>(`polyline[data-series="${s.key}"]`, svg);
    line.setAttribute('points', shown.map((p) => `${x(p.t).toFixed(1)},${y(p[s.key] * s.scale).toFixed(1)}`).join(' '));
    line.setAttribute('data-count', String(shown.length));
  }
  $('.ymax', svg).textContent = `${fmt(max)}/s`;
  $('.ymid', svg).textContent = `${fmt(max / 2)}/s`;
  $('.tspan', svg).textContent = shown.length > 1 ? `last ${Math.round(span / 1000)} s` : 'waiting for samples…';
}

/** The chart's top: 1, 2 or 5 times a power of ten, so its two labels stay round numbers. */
function niceCeil(v: number): number {
  const p = 10 ** Math.floor(Math.log10(v));
  const m = v / p;
  return (m <= 1 ? 1 : m <= 2 ? 2 : m <= 5 ? 5 : 10) * p;
}

// The token, when the control plane wants one: asked once, kept for this tab only (sessionStorage), and
// sent as a header, never as a cookie, so no other site's page can make the browser send it.
const TOKEN_KEY = 'crawler-control-plane-token';
let afterToken: (() => void) | null = null;

function askToken(retry: (() => void) | undefined, wrong: boolean): void {
  afterToken = retry ?? afterToken;
  const form = $<HTMLFormElement>('#token-form');
  // Several calls fail at once: the first one to see a stored token says it was refused, and stays said.
  if (wrong) {
    sessionStorage.removeItem(TOKEN_KEY);
    $('#token-note').textContent = 'that token was refused: ';
  } else if (form.hidden) {
    $('#token-note').textContent = 'this control plane needs its token: ';
  }
  if (form.hidden) {
    form.hidden = false;
    $('#token-input').focus();
  }
}

$('#token-form').addEventListener('submit', (ev) => {
  ev.preventDefault();
  const input = $<HTMLInputElement>('#token-input');
  const token = input.value.trim();
  if (!token) return;
  sessionStorage.setItem(TOKEN_KEY, token);
  input.value = '';
  $('#token-form').hidden = true;
  const retry = afterToken;
  afterToken = null;
  poll();
  retry?.();
});

async function call(method: string, path: string, body?: unknown, retry?: () => void): Promise<Response> {
  const headers: Record<string, string> = { accept: 'application/json' };
  const token = sessionStorage.getItem(TOKEN_KEY);
  if (token) headers.authorization = `Bearer ${token}`;
  const init: RequestInit = { method, headers };
  if (method !== 'GET') {
    headers['content-type'] = 'application/json';
    init.body = JSON.stringify(body ?? {});
  }
  const response = await fetch(path, init);
  if (response.status === 401) {
    askToken(retry, !!sessionStorage.getItem(TOKEN_KEY));
    throw new Error('the control plane needs its token');
  }
  return response;
}

async function get<T>(path: string): Promise<T> {
  const response = await call('GET', path);
  if (!response.ok) throw new Error(`${path}: HTTP ${response.status}`);
  return response.json();
}

async function post<T>(path: string, body: unknown, retry: () => void): Promise<{ ok: boolean; body: T }> {
  const response = await call('POST', path, body, retry);
  return { ok: response.ok, body: await response.json() };
}

const message = (e: unknown): string => (e instanceof Error ? e.message : String(e));

let polling = false;
async function poll(): Promise<void> {
  // A slow control plane must not pile up requests: a tick that finds the last poll still waiting skips.
  if (polling) return;
  polling = true;
  try {
    const [status, history] = await Promise.all([get<Status>('status'), get<{ points: HistoryPoint[] }>(`status/history?since=${lastT}`)]);
    renderStatus(status);
    for (const p of history.points) {
      points.push(p);
      lastT = p.t;
    }
    if (points.length > 900) points.splice(0, points.length - 900);
    renderChart();
    $('#connection').textContent = '';
  } catch (e) {
    $('#connection').textContent = `control plane unreachable: ${message(e)}`;
  } finally {
    polling = false;
  }
}

function submitSeeds(ev?: Event): void {
  ev?.preventDefault();
  const field = $<HTMLTextAreaElement>('#seed-urls');
  const urls = field.value.split(/\s+/).filter(Boolean);
  const out = $('#seed-result');
  if (!urls.length) {
    out.textContent = 'give at least one URL or domain';
    return;
  }
  out.textContent = 'submitting…';
  post<{ accepted: string[]; message?: string }>('seeds', { urls }, submitSeeds).then(
    (r) => {
      if (r.ok) {
        const { accepted } = r.body;
        out.textContent = `accepted ${accepted.length} seed${accepted.length === 1 ? '' : 's'}: ${accepted.join(' ')}`;
        out.className = 'ok';
        field.value = '';
        poll();
      } else {
        out.textContent = `refused: ${r.body.message || JSON.stringify(r.body)}`;
        out.className = 'bad';
      }
    },
    (e) => {
      out.textContent = `failed: ${message(e)}`;
      out.className = 'bad';
    },
  );
}
$('#seed-form').addEventListener('submit', submitSeeds);

function pauseOrResume(): void {
  const action = $('#pause-button').dataset.action || 'pause';
  // A refusal for want of the token is answered by the token form, which calls this again.
  post(action, {}, pauseOrResume).then(poll, () => {});
}
$('#pause-button').addEventListener('click', pauseOrResume);

function lookUp(ev?: Event): void {
  ev?.preventDefault();
  const url = $<HTMLInputElement>('#lookup-url').value.trim();
  const out = $('#lookup-result');
  const link = $<HTMLAnchorElement>('#lookup-content');
  link.hidden = true;
  if (!url) return;
  call('GET', `urls?url=${encodeURIComponent(url)}`, undefined, lookUp)
    .then(async (r) => ({ ok: r.ok, body: await r.json() }))
    .then(
      (r) => {
        out.textContent = JSON.stringify(r.body, null, 2);
        if (r.ok) {
          link.href = `urls/content?url=${encodeURIComponent(r.body.url)}`;
          link.hidden = false;
        }
      },
      (e) => {
        out.textContent = message(e);
      },
    );
}
$('#lookup-form').addEventListener('submit', lookUp);

// A link cannot carry the token: with one, the content is fetched with it and opened as plain text.
$<HTMLAnchorElement>('#lookup-content').addEventListener('click', (ev) => {
  if (!sessionStorage.getItem(TOKEN_KEY)) return;
  ev.preventDefault();
  // Opened now, inside the click, or the browser would block it as a popup once the fetch is done.
  const tab = window.open('', '_blank');
  const href = (ev.currentTarget as HTMLAnchorElement).getAttribute('href') ?? '';
  call('GET', href)
    .then((r) => r.text())
    .then((text) => {
      const url = URL.createObjectURL(new Blob([text], { type: 'text/plain; charset=utf-8' }));
      if (tab) tab.location.href = url;
      else window.location.href = url;
    });
});

poll();
setInterval(poll, 2000);

// A module, not a classic script: its names stay its own instead of landing on `window`.
export {};
