#!/usr/bin/env node
/**
 * The demo web: a few made-up sites with linked pages, served by one process under every site's name, for
 * the demo (docker-compose.demo.yml) and the deploy test. What it holds shows each box of the crawler at work:
 *
 * - pages that link within their site and across sites (the URL extractor, the filter's scope, URL-seen);
 * - a printable copy of every tenth page, the same bytes (Content Seen? drops it as an exact duplicate);
 * - a robots.txt that keeps one site's /private/ out, and a link to a page that does not exist (404);
 * - an answer that takes DEMO_WEB_LATENCY_MS, so a crawl lasts long enough to watch.
 *
 *   DEMO_WEB_PORT        listening port, and the port of its links      (default 8080)
 *   DEMO_WEB_SITES       the sites' host names, comma-separated         (default the six below)
 *   DEMO_WEB_PAGES       pages per site                                 (default 150)
 *   DEMO_WEB_LATENCY_MS  time each answer takes                         (default 50)
 *
 * Each request is logged on stdout as one JSON line {host, path, status}, so a test can count what was
 * fetched, and how often, from the web's side. Required as a module, it serves nothing and exports the
 * site map the tests check a crawl against.
 */
'use strict';

const http = require('node:http');

const DEFAULT_SITES = ['news.demo.test', 'shop.demo.test', 'blog.demo.test', 'wiki.demo.test', 'docs.demo.test', 'forum.demo.test'];
const PRIVATE_SITE = 1; // its robots.txt disallows /private/
const MIRROR_EVERY = 10;

/** The web's layout: for each site, the paths that answer 200 with a page, and those robots.txt keeps out. */
function demoWeb({ sites = DEFAULT_SITES, pages = 150, port = 80 } = {}) {
  const origin = (host) => (port === 80 ? `http://${host}` : `http://${host}:${port}`);
  const pagePath = (i) => (i === 0 ? '/' : `/page/${i}`);
  const pageLinks = (site, i) => {
    const next = sites[(site + 1) % sites.length];
    const links = [i + 1, 2 * i + 1, 2 * i + 2].filter((j) => j < pages).map((j) => pagePath(j));
    if (i % MIRROR_EVERY === 0) links.push(`/print/${i}`);
    if (i === 0) links.push('/missing', '/private/notes');
    links.push(`${origin(next)}${pagePath((i * 7) % pages)}`);
    return links;
  };
  return {
    sites,
    pages,
    /** The answer to a request for `path` on `host`: status, type, body. */
    answer(host, path) {
      const site = sites.indexOf(host);
      if (site < 0) return { status: 404, body: 'no such site\n' };
      if (path === '/robots.txt') {
        return { status: 200, type: 'text/plain', body: `User-agent: *\n${site === PRIVATE_SITE ? 'Disallow: /private/\n' : 'Disallow:\n'}` };
      }
      const match = /^\/(?:(page|print)\/(\d+))?$/.exec(path);
      const kind = match?.[1];
      const i = match?.[2] === undefined ? 0 : Number(match[2]);
      if (path === '/private/notes') return { status: 200, type: 'text/html', body: '<title>private</title><p>Kept out by robots.txt.</p>' };
      if (!match || i >= pages || (kind === 'page' && i === 0) || (kind === 'print' && i % MIRROR_EVERY !== 0)) return { status: 404, body: 'not found\n' };
      // A printable copy is the page itself, byte for byte: the same content under another URL.
      const text = `<h1>${host}: page ${i}</h1><p>${`Page ${i} of ${host}, one of ${pages}. `.repeat(8)}</p>`;
      const links = pageLinks(site, i)
        .map((href) => `<li><a href="${href}">${href}</a></li>`)
        .join('');
      return { status: 200, type: 'text/html; charset=utf-8', body: `<!doctype html><title>${host} ${i}</title>${text}<ul>${links}</ul>` };
    },
    /** Every URL a crawl from the sites' home pages must fetch and keep: pages and printable copies. */
    pageUrls() {
      return sites.flatMap((host) =>
        Array.from({ length: pages }, (_, i) => [`${origin(host)}${pagePath(i)}`, ...(i % MIRROR_EVERY === 0 ? [`${origin(host)}/print/${i}`] : [])])
          .flat()
          .concat(sites.indexOf(host) === PRIVATE_SITE ? [] : [`${origin(host)}/private/notes`]),
      );
    },
    /** The URLs robots.txt keeps out: a crawl must never fetch them. */
    disallowedUrls() {
      return [`${origin(sites[PRIVATE_SITE])}/private/notes`];
    },
  };
}

function serve() {
  const port = Number(process.env.DEMO_WEB_PORT || 8080);
  const latencyMs = Number(process.env.DEMO_WEB_LATENCY_MS || 50);
  const web = demoWeb({
    sites: process.env.DEMO_WEB_SITES ? process.env.DEMO_WEB_SITES.split(',').map((s) => s.trim()) : undefined,
    pages: Number(process.env.DEMO_WEB_PAGES || 150),
    port,
  });
  const server = http.createServer((req, res) => {
    const host = String(req.headers.host ?? '').replace(/:\d+$/, '');
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    const { status, type = 'text/plain', body } = web.answer(host, path);
    setTimeout(() => {
      res.writeHead(status, { 'content-type': type, 'content-length': Buffer.byteLength(body) });
      res.end(body);
      process.stdout.write(`${JSON.stringify({ host, path, status })}\n`);
    }, latencyMs);
  });
  server.listen(port, () => console.error(`demo web: ${web.sites.length} sites of ${web.pages} pages on port ${port}`));
  const stop = () => server.close(() => process.exit(0));
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

if (require.main === module) serve();
module.exports = { demoWeb };
