/**
 * The dashboard's script, served as `dashboard.js` from the control plane's own origin (the page's policy
 * allows no inline script). It polls `status` and `status/history` every two seconds with relative URLs
 * (so it also works behind a path prefix) and writes every crawled string with `textContent`, never as HTML.
 */
export const DASHBOARD_SCRIPT = `
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

    // Hosts the crawl waits for (robots.txt failing) or gave up: the status's robotsWaiting and hostsSetAside.
    var waiting = (s.robotsWaiting && s.robotsWaiting.hosts) || [];
    var aside = s.hostsSetAside || [];
    $('#hosts-aside').hidden = waiting.length + aside.length === 0;
    setText($('#hosts-aside-note'), s.waitingOnly || '');
    var asideRows = $('#hosts-aside tbody');
    asideRows.replaceChildren();
    waiting.forEach(function (w) {
      var row = document.createElement('tr');
      cell(row, w.host);
      cell(row, 'waiting for robots.txt', 'nowrap');
      cell(row, '–', 'num');
      cell(row, (w.status ? 'answered ' + w.status : w.error || 'unreachable') + ' · ' + w.tries + ' tries · next ' + new Date(w.nextTryAt).toLocaleTimeString() + ' · given up at ' + new Date(w.giveUpAt).toLocaleTimeString());
      asideRows.appendChild(row);
    });
    aside.forEach(function (h) {
      var row = document.createElement('tr');
      cell(row, h.host);
      cell(row, h.reason === 'timeouts' ? 'backed off: timeouts' : 'set aside: ' + h.reason, 'nowrap');
      cell(row, fmt(h.urls), 'num');
      cell(row, h.detail);
      asideRows.appendChild(row);
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
