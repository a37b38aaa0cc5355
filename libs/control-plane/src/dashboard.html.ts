/**
 * The live dashboard: one self-contained page (inline CSS, inline SVG, a small inline script; nothing from a
 * CDN, so it works on a machine without internet). It polls `status` and `status/history` every two seconds
 * with relative URLs (so it also works behind a path prefix) and writes every crawled string with
 * `textContent`, never as HTML.
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

const SCRIPT = `
(function () {
  'use strict';
  var $ = function (sel) { return document.querySelector(sel); };
  var fmt = function (n) { return n == null ? '–' : Number(n).toLocaleString('en-US', { maximumFractionDigits: n < 10 ? 1 : 0 }); };
  var setText = function (el, text) { if (el) el.textContent = text; };
  var history = [];
  var lastT = 0;

  function cell(row, text, cls) {
    var td = document.createElement('td');
    td.textContent = text;
    if (cls) td.className = cls;
    row.appendChild(td);
  }

  function renderStatus(s) {
    var outages = s.outages || [];
    var state = s.paused ? (s.drained ? 'paused' : 'pausing') : s.complete ? 'complete' : outages.length || s.stale ? 'degraded' : s.pending > 0 ? 'crawling' : 'idle';
    var down = outages.map(function (o) { return o.dependency + ' unavailable since ' + new Date(o.since).toLocaleTimeString() + ' (' + o.error + ')'; });
    if (s.stale) down.push(Date.parse(s.at) > 0 ? 'figures from ' + Math.round(s.ageMs / 1000) + ' s ago' : 'no figures yet');
    setText($('#outages'), down.join(' · '));
    var badge = $('#state');
    badge.textContent = state;
    badge.className = 'badge ' + state;
    $('#pause-button').textContent = s.paused ? 'Resume' : 'Pause';
    $('#pause-button').dataset.action = s.paused ? 'resume' : 'pause';
    setText($('#pause-note'), s.paused ? 'paused since ' + (s.pause.since || '?') + (s.pause.reason ? ' (' + s.pause.reason + ')' : '') + ' · ' + s.inFlight + ' in flight' : '');
    var t = s.totals;
    setText($('#total-fetched'), fmt(t.fetched || 0));
    setText($('#total-stored'), fmt(t.stored || 0));
    setText($('#total-duplicates'), fmt((t.duplicate || 0) + (t['duplicate.near'] || 0)));
    setText($('#total-errors'), fmt(errorsOf(t)));
    setText($('#total-frontier'), fmt(s.frontier));
    setText($('#total-inflight'), fmt(s.inFlight));
    setText($('#total-downloaders'), fmt(s.downloaders));
    setText($('#rate-fetched'), fmt(s.rates.fetched) + '/s');
    setText($('#updated'), 'updated ' + new Date(s.at).toLocaleTimeString());

    s.stages.forEach(function (st) {
      var g = document.getElementById('box-' + st.id);
      if (!g) return;
      if (st.id === 'frontier') {
        setText(g.querySelector('.total'), fmt(s.frontier) + ' URLs · ' + fmt(s.inFlight) + ' out');
      } else {
        setText(g.querySelector('.total'), fmt(st.total) + ' ' + st.unit);
      }
      setText(g.querySelector('.rate'), fmt(st.perSecond) + ' ' + (st.id === 'downloader' ? 'pages' : st.unit) + '/s');
      g.classList.toggle('busy', st.depth > 0 || st.perSecond > 0);
    });
    var storage = document.getElementById('box-storage');
    setText(storage.querySelector('.total'), fmt(t.stored || 0) + ' pages');
    setText(storage.querySelector('.rate'), fmt(s.rates.stored) + ' pages/s');

    Object.keys(s.queues).forEach(function (q) {
      var g = document.getElementById('arrow-' + q);
      if (!g) return;
      var c = s.queues[q];
      var depth = c.waiting + c.active + c.delayed;
      setText(g.querySelector('.depth'), fmt(depth));
      g.querySelector('.depth').setAttribute('data-depth', String(depth));
      g.classList.toggle('busy', depth > 0);
    });
    setText($('#arrow-seeds .depth'), fmt(t.seeds || 0));
    setText($('#arrow-stored .depth'), fmt(s.rates.stored) + '/s');

    var hosts = $('#top-hosts tbody');
    hosts.replaceChildren();
    s.topHosts.forEach(function (h) {
      var row = document.createElement('tr');
      cell(row, h.host);
      cell(row, fmt(h.recentRequests), 'num');
      cell(row, fmt(h.fetched), 'num');
      cell(row, fmt(h.queued), 'num');
      cell(row, h.delayMs == null ? '–' : fmt(h.delayMs) + ' ms' + (h.delayCause ? ' (' + h.delayCause + ')' : ''));
      hosts.appendChild(row);
    });
    setText($('#top-hosts-empty'), s.topHosts.length ? '' : 'no requests yet');

    var below = s.belowFloor || [];
    $('#below-floor').hidden = below.length === 0;
    var belowRows = $('#below-floor tbody');
    belowRows.replaceChildren();
    below.forEach(function (b) {
      var row = document.createElement('tr');
      cell(row, b.host);
      cell(row, fmt(b.delayMs) + ' ms', 'num');
      cell(row, fmt(b.minDelayMs) + ' ms', 'num');
      belowRows.appendChild(row);
    });

    var errors = $('#recent-errors tbody');
    errors.replaceChildren();
    s.recentErrors.forEach(function (e) {
      var row = document.createElement('tr');
      cell(row, new Date(e.at).toLocaleTimeString(), 'nowrap');
      cell(row, e.kind + (e.status ? ' ' + e.status : ''), 'nowrap');
      cell(row, e.url, 'url');
      cell(row, e.error || '');
      errors.appendChild(row);
    });
    setText($('#recent-errors-empty'), s.recentErrors.length ? '' : 'no errors');
  }

  function errorsOf(t) {
    var n = (t['status.4xx'] || 0) + (t['status.5xx'] || 0);
    Object.keys(t).forEach(function (k) { if (k.indexOf('error.') === 0) n += t[k]; });
    return n;
  }

  var SERIES = [
    { key: 'fetched', label: 'pages fetched/s' },
    { key: 'stored', label: 'pages stored/s' },
    { key: 'links', label: 'links extracted/s', scale: 0.1 },
    { key: 'errors', label: 'errors/s' },
  ];

  function renderChart() {
    var svg = $('#chart');
    var w = 1060, h = 200, left = 44, bottom = 22;
    var points = history.slice(-300);
    var max = 1;
    points.forEach(function (p) { SERIES.forEach(function (s) { max = Math.max(max, p[s.key] * (s.scale || 1)); }); });
    max = niceCeil(max);
    var t0 = points.length ? points[0].t : Date.now();
    var t1 = points.length ? points[points.length - 1].t : t0 + 1;
    var span = Math.max(t1 - t0, 1);
    var x = function (t) { return left + ((t - t0) / span) * (w - left - 10); };
    var y = function (v) { return h - bottom - (v / max) * (h - bottom - 10); };
    SERIES.forEach(function (s) {
      var line = svg.querySelector('polyline[data-series="' + s.key + '"]');
      line.setAttribute('points', points.map(function (p) { return x(p.t).toFixed(1) + ',' + y(p[s.key] * (s.scale || 1)).toFixed(1); }).join(' '));
      line.setAttribute('data-count', String(points.length));
    });
    setText(svg.querySelector('.ymax'), fmt(max) + '/s');
    setText(svg.querySelector('.ymid'), fmt(max / 2) + '/s');
    setText(svg.querySelector('.tspan'), points.length > 1 ? 'last ' + Math.round(span / 1000) + ' s' : 'waiting for samples…');
  }

  function niceCeil(v) {
    var p = Math.pow(10, Math.floor(Math.log10(v)));
    var m = v / p;
    return (m <= 1 ? 1 : m <= 2 ? 2 : m <= 5 ? 5 : 10) * p;
  }

  // The token, when the control plane wants one: asked once, kept for this tab only (sessionStorage), and
  // sent as a header, never as a cookie, so no other site's page can make the browser send it.
  var TOKEN_KEY = 'crawler-control-plane-token';
  var afterToken = null;
  function withToken(headers) {
    var token = sessionStorage.getItem(TOKEN_KEY);
    if (token) headers.authorization = 'Bearer ' + token;
    return headers;
  }
  function askToken(retry, wrong) {
    afterToken = retry || afterToken;
    // Several calls fail at once: the first one to see a stored token says it was refused, and stays said.
    if (wrong) {
      sessionStorage.removeItem(TOKEN_KEY);
      setText($('#token-note'), 'that token was refused: ');
    } else if ($('#token-form').hidden) {
      setText($('#token-note'), 'this control plane needs its token: ');
    }
    if ($('#token-form').hidden) {
      $('#token-form').hidden = false;
      $('#token-input').focus();
    }
  }
  $('#token-form').addEventListener('submit', function (ev) {
    ev.preventDefault();
    var token = $('#token-input').value.trim();
    if (!token) return;
    sessionStorage.setItem(TOKEN_KEY, token);
    $('#token-input').value = '';
    $('#token-form').hidden = true;
    var retry = afterToken;
    afterToken = null;
    poll();
    if (retry) retry();
  });

  function call(method, path, body, retry) {
    var init = { method: method, headers: withToken({ accept: 'application/json' }) };
    if (method !== 'GET') { init.headers['content-type'] = 'application/json'; init.body = JSON.stringify(body || {}); }
    return fetch(path, init).then(function (r) {
      if (r.status === 401) {
        askToken(retry, !!sessionStorage.getItem(TOKEN_KEY));
        throw new Error('the control plane needs its token');
      }
      return r;
    });
  }

  function get(path) {
    return call('GET', path).then(function (r) {
      if (!r.ok) throw new Error(path + ': HTTP ' + r.status);
      return r.json();
    });
  }

  function post(path, body, retry) {
    return call('POST', path, body, retry).then(function (r) {
      return r.json().then(function (json) { return { ok: r.ok, status: r.status, body: json }; });
    });
  }

  var polling = false;
  function poll() {
    if (polling) return;
    polling = true;
    Promise.all([get('status'), get('status/history?since=' + lastT)])
      .then(function (res) {
        renderStatus(res[0]);
        res[1].points.forEach(function (p) { history.push(p); lastT = p.t; });
        if (history.length > 900) history.splice(0, history.length - 900);
        renderChart();
        setText($('#connection'), '');
      })
      .catch(function (e) { setText($('#connection'), 'control plane unreachable: ' + e.message); })
      .then(function () { polling = false; });
  }

  function submitSeeds(ev) {
    if (ev) ev.preventDefault();
    var urls = $('#seed-urls').value.split(/\\s+/).filter(Boolean);
    var out = $('#seed-result');
    if (!urls.length) { out.textContent = 'give at least one URL or domain'; return; }
    out.textContent = 'submitting…';
    post('seeds', { urls: urls }, submitSeeds).then(function (r) {
      if (r.ok) {
        out.textContent = 'accepted ' + r.body.accepted.length + ' seed' + (r.body.accepted.length === 1 ? '' : 's') + ': ' + r.body.accepted.join(' ');
        out.className = 'ok';
        $('#seed-urls').value = '';
        poll();
      } else {
        out.textContent = 'refused: ' + (r.body.message || JSON.stringify(r.body));
        out.className = 'bad';
      }
    }).catch(function (e) { out.textContent = 'failed: ' + e.message; out.className = 'bad'; });
  }
  $('#seed-form').addEventListener('submit', submitSeeds);

  function pauseOrResume() {
    var action = $('#pause-button').dataset.action || 'pause';
    post(action, {}, pauseOrResume).then(poll, function () {});
  }
  $('#pause-button').addEventListener('click', pauseOrResume);

  function lookUp(ev) {
    if (ev) ev.preventDefault();
    var url = $('#lookup-url').value.trim();
    var out = $('#lookup-result');
    var link = $('#lookup-content');
    link.hidden = true;
    if (!url) return;
    call('GET', 'urls?url=' + encodeURIComponent(url), undefined, lookUp).then(function (r) { return r.json().then(function (b) { return { ok: r.ok, body: b }; }); }).then(function (r) {
      out.textContent = JSON.stringify(r.body, null, 2);
      if (r.ok) { link.href = 'urls/content?url=' + encodeURIComponent(r.body.url); link.hidden = false; }
    }, function (e) { out.textContent = e.message; });
  }
  $('#lookup-form').addEventListener('submit', lookUp);

  // A link cannot carry the token: with one, the content is fetched with it and opened as plain text.
  $('#lookup-content').addEventListener('click', function (ev) {
    if (!sessionStorage.getItem(TOKEN_KEY)) return;
    ev.preventDefault();
    var tab = window.open('', '_blank');
    call('GET', this.getAttribute('href')).then(function (r) { return r.text(); }).then(function (text) {
      var url = URL.createObjectURL(new Blob([text], { type: 'text/plain; charset=utf-8' }));
      if (tab) tab.location.href = url; else window.location.href = url;
    });
  });

  poll();
  setInterval(poll, 2000);
})();
`;

const STYLE = `
  :root { --ink: #1d2733; --muted: #6b7785; --line: #c9d2dc; --accent: #1f6feb; --busy: #e8f1ff; --bad: #c62828; --ok: #2e7d32; }
  * { box-sizing: border-box; }
  body { margin: 0; font: 14px/1.4 system-ui, -apple-system, 'Segoe UI', Roboto, 'DejaVu Sans', sans-serif; color: var(--ink); background: #f6f8fa; }
  header { display: flex; align-items: center; gap: 16px; padding: 12px 24px; background: #fff; border-bottom: 1px solid var(--line); flex-wrap: wrap; }
  header h1 { font-size: 18px; margin: 0; }
  .badge { padding: 2px 10px; border-radius: 12px; font-weight: 600; background: #eee; }
  .badge.crawling { background: #dbeafe; color: #1e40af; } .badge.paused, .badge.pausing { background: #fff3cd; color: #8a6d00; }
  .badge.complete { background: #d1fae5; color: #065f46; } .badge.degraded { background: #fee2e2; color: #991b1b; }
  button { font: inherit; padding: 6px 14px; border: 1px solid var(--accent); background: var(--accent); color: #fff; border-radius: 6px; cursor: pointer; }
  #pause-button { background: #fff; color: var(--accent); }
  .muted { color: var(--muted); font-size: 12px; }
  section.warn { border-color: var(--bad); background: #fff5f5; }
  #token-form input { font: inherit; padding: 5px 8px; width: 18em; } #token-note { color: var(--bad); }
  main { padding: 16px 24px; display: grid; grid-template-columns: 1fr 1fr; gap: 16px; max-width: 1400px; }
  section { background: #fff; border: 1px solid var(--line); border-radius: 8px; padding: 12px 16px; }
  section.wide { grid-column: 1 / -1; }
  h2 { font-size: 15px; margin: 0 0 8px; }
  .totals { display: flex; gap: 24px; flex-wrap: wrap; }
  .totals div { min-width: 90px; } .totals b { display: block; font-size: 22px; }
  svg text { font-family: inherit; }
  #pipeline { width: 100%; height: auto; }
  .box rect { fill: #fff; stroke: #8795a5; stroke-width: 1.5; }
  .box.busy rect { fill: var(--busy); stroke: var(--accent); }
  .box.store rect { fill: #f3f0ff; }
  .box text { text-anchor: middle; } .box .label { font-weight: 700; font-size: 13px; }
  .box .total { font-size: 12px; } .box .rate { font-size: 12px; fill: var(--accent); font-weight: 600; }
  .arrow path { fill: none; stroke: #8795a5; stroke-width: 1.6; } .arrow.busy path { stroke: var(--accent); stroke-width: 2.4; }
  .arrow text { text-anchor: middle; } .arrow .depth { font-size: 13px; font-weight: 700; } .arrow .queue { font-size: 10px; fill: var(--muted); }
  marker path { fill: #8795a5; }
  #chart { width: 100%; height: auto; } #chart .axis { stroke: var(--line); } #chart text { font-size: 11px; fill: var(--muted); }
  #chart polyline { fill: none; stroke-width: 2; }
  .legend span { margin-right: 14px; font-size: 12px; } .legend i { display: inline-block; width: 14px; height: 3px; vertical-align: middle; margin-right: 4px; }
  table { border-collapse: collapse; width: 100%; font-size: 12px; }
  th, td { text-align: left; padding: 3px 6px; border-bottom: 1px solid #eef1f4; } td.num { text-align: right; font-variant-numeric: tabular-nums; }
  .scroll { max-height: 300px; overflow: auto; } td.nowrap { white-space: nowrap; }
  th { position: sticky; top: 0; background: #fff; }
  td.url { max-width: 380px; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
  textarea, input[type=url], input[type=text] { width: 100%; font: inherit; padding: 6px; border: 1px solid var(--line); border-radius: 6px; }
  #seed-result.ok { color: var(--ok); } #seed-result.bad { color: var(--bad); }
  pre { background: #f6f8fa; padding: 8px; overflow: auto; max-height: 220px; font-size: 12px; }
  #connection { color: var(--bad); }
`;

const COLORS: Record<string, string> = { fetched: '#1f6feb', stored: '#2e7d32', links: '#9a6700', errors: '#c62828' };

export const DASHBOARD_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Crawler · control plane</title>
<style>${STYLE}</style>
</head>
<body>
<header>
  <h1>Crawler control plane</h1>
  <span id="state" class="badge">…</span>
  <button id="pause-button" type="button" data-action="pause">Pause</button>
  <span id="pause-note" class="muted"></span>
  <span style="flex:1"></span>
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
      ${Object.entries(COLORS)
        .map(([key, color]) => `<polyline data-series="${key}" stroke="${color}" points=""/>`)
        .join('')}
    </svg>
    <div class="legend">${Object.entries(COLORS)
      .map(
        ([key, color]) =>
          `<span><i style="background:${color}"></i>${key === 'links' ? 'links extracted/s ÷ 10' : `pages ${key === 'errors' ? 'in error' : key}/s`}</span>`,
      )
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
<script>${SCRIPT}</script>
</body>
</html>
`;
