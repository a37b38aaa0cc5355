import { gzipSync } from 'node:zlib';
import { decodeJob, InvalidMessageError, QUEUE_SCHEMAS, QueueName, fetchQueue, pluginEventsQueue, pluginQueue } from '@crawler/contracts';
import { decodeHtml, parseHtmlPage, parseSitemap } from '@crawler/html';
import { RobotsPolicy } from '@crawler/robots';
import { canonicalize, resolveLink } from '@crawler/url';
import { Prng } from '../web/prng';

/**
 * Random bytes and random mutations of realistic inputs thrown at every parser that reads what the web (or
 * a queue) sends: each must answer without throwing (decodeJob may throw InvalidMessageError, its
 * documented refusal, and nothing else) and without hanging (each call under CALL_LIMIT_MS of CPU time).
 *
 * Reproducible: every target runs from a seed printed on failure; FUZZ_SEED=<n> replays it. FUZZ_MS sets
 * the time per target (default 2000).
 */
const SEED = Number(process.env.FUZZ_SEED || Date.now() % 2 ** 31);
const BUDGET_MS = Number(process.env.FUZZ_MS || 2000);
const CALL_LIMIT_MS = 200;
const RETIMES = 4;

interface FuzzReport {
  calls: number;
  slowestMs: number;
  slowestInput: string;
}

const reports: Record<string, FuzzReport> = {};

afterAll(() => {
  const rows = Object.entries(reports).map(([name, r]) => `  ${name.padEnd(22)} ${String(r.calls).padStart(7)} calls, slowest ${r.slowestMs.toFixed(2)} ms of CPU`);
  console.log(`fuzz seed ${SEED} (FUZZ_SEED=${SEED} replays), ${BUDGET_MS} ms per target:\n${rows.join('\n')}`);
});

/**
 * Runs `call` on inputs from `generate` for BUDGET_MS. A throw fails the test naming the seed, the iteration
 * and the input; a call over CALL_LIMIT_MS of CPU time is timed again, after a pause, up to RETIMES times and
 * fails only if it is slow every time. The process's CPU time counts every thread's, and a collection of a
 * big heap (the worker has run other files) spends hundreds of ms on the collector's threads, which may land
 * in two timings in a row on a loaded machine; a hang is slow every time.
 */
async function fuzz<T>(name: string, generate: (rng: Prng) => T, call: (input: T) => unknown, show: (input: T) => string) {
  const seed = (SEED + hash(name)) >>> 0;
  const rng = new Prng(seed);
  const report: FuzzReport = { calls: 0, slowestMs: 0, slowestInput: '' };
  reports[name] = report;
  const deadline = performance.now() + BUDGET_MS;
  // CPU time, not wall time: on a busy machine (2 cores shared with other tests) a call may wait for a core
  // far longer than it computes; a hang is computation.
  const timed = async (input: T) => {
    const start = process.cpuUsage();
    await call(input);
    const used = process.cpuUsage(start);
    return (used.user + used.system) / 1000;
  };
  while (performance.now() < deadline) {
    const input = generate(rng);
    let ms: number;
    try {
      ms = await timed(input);
      for (let again = 0; again < RETIMES && ms > CALL_LIMIT_MS; again++) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        ms = Math.min(ms, await timed(input));
      }
    } catch (error) {
      throw new Error(`${name}: threw on iteration ${report.calls} (FUZZ_SEED=${SEED}): ${(error as Error)?.stack ?? error}\ninput: ${show(input).slice(0, 2000)}`);
    }
    report.calls++;
    if (ms > report.slowestMs) {
      report.slowestMs = ms;
      report.slowestInput = show(input).slice(0, 300);
    }
    if (ms > CALL_LIMIT_MS) throw new Error(`${name}: ${ms.toFixed(0)} ms on one call (FUZZ_SEED=${SEED}), input: ${show(input).slice(0, 2000)}`);
    // Let timers (jest's own) run now and then.
    if (report.calls % 200 === 0) await new Promise((resolve) => setImmediate(resolve));
  }
  expect(report.calls).toBeGreaterThan(10);
}

function hash(text: string): number {
  let h = 2166136261;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 16777619);
  return h >>> 0;
}

// ---------- mutators ----------

/** Fragments that tend to hit parser edge cases. */
const TOKENS = [
  '<',
  '>',
  '</',
  '<!--',
  '-->',
  '<![CDATA[',
  ']]>',
  '<!DOCTYPE',
  '<?xml',
  '?>',
  '&',
  '&#',
  '&#x',
  '&amp;',
  '&#0;',
  '&#xFFFFFFFF;',
  '"',
  "'",
  '=',
  '/',
  '\\',
  '%',
  '%00',
  '%zz',
  '%2F',
  '#',
  '?',
  '@',
  ':',
  '//',
  '..',
  '../',
  './',
  '\u0000',
  '\r',
  '\n',
  '\t',
  ' ',
  '\uFEFF',
  '\uFFFD',
  '\u202E',
  '\uD800',
  '𝔘',
  'é',
  'ß',
  'İ',
  'xn--',
  'xn--zz',
  '[::1]',
  '[',
  ']',
  '0x7f.1',
  '4294967296',
  '<a href=',
  '<base href=',
  '<meta charset=',
  '<meta http-equiv="content-type" content="text/html; charset=',
  '<script>',
  '</script>',
  '<style>',
  '<title>',
  '<noscript>',
  '<template>',
  '<svg>',
  '<math>',
  '<img src=',
  '<link rel=canonical href=',
  '<meta name=robots content=',
  'User-agent:',
  'Disallow:',
  'Allow:',
  'Crawl-delay:',
  'Sitemap:',
  '*',
  '$',
  '<url>',
  '<loc>',
  '</loc>',
  '<priority>',
  '<urlset>',
  '<sitemapindex>',
  'javascript:',
  'mailto:',
  'data:',
  'http:',
  'https:',
  'ftp:',
  'HTTP://',
  'windows-1251',
  'shift_jis',
  'utf-16le',
  'x-user-defined',
];

function randomBytes(rng: Prng, max: number): Buffer {
  const out = Buffer.alloc(rng.int(0, max));
  for (let i = 0; i < out.length; i++) out[i] = rng.int(0, 255);
  return out;
}

/** A few random edits of `bytes`: flip, insert bytes or tokens, delete, duplicate, truncate, repeat. */
function mutateBytes(rng: Prng, bytes: Buffer, maxLength = 256 * 1024): Buffer {
  let b = Buffer.from(bytes);
  const edits = rng.int(1, 8);
  for (let e = 0; e < edits; e++) {
    const at = rng.int(0, b.length);
    switch (rng.int(0, 7)) {
      case 0: // flip a byte
        if (b.length) b[Math.min(at, b.length - 1)] = rng.int(0, 255);
        break;
      case 1: // insert random bytes
        b = Buffer.concat([b.subarray(0, at), randomBytes(rng, 16), b.subarray(at)]);
        break;
      case 2: // insert a token
        b = Buffer.concat([b.subarray(0, at), Buffer.from(rng.pick(TOKENS)), b.subarray(at)]);
        break;
      case 3: // delete a range
        b = Buffer.concat([b.subarray(0, at), b.subarray(Math.min(b.length, at + rng.int(1, 64)))]);
        break;
      case 4: {
        // duplicate a range
        const piece = b.subarray(at, at + rng.int(1, 128));
        b = Buffer.concat([b.subarray(0, at), piece, piece, b.subarray(at)]);
        break;
      }
      case 5: // truncate
        b = b.subarray(0, at);
        break;
      case 6: {
        // repeat a token many times (deep nesting, long runs)
        const token = Buffer.from(rng.pick(TOKENS));
        b = Buffer.concat([b.subarray(0, at), Buffer.alloc(token.length * rng.int(10, 5000), token), b.subarray(at)]);
        break;
      }
      default: // swap two halves
        b = Buffer.concat([b.subarray(at), b.subarray(0, at)]);
    }
  }
  return b.length > maxLength ? b.subarray(0, maxLength) : b;
}

function mutateText(rng: Prng, text: string): string {
  return rng.chance(0.3) ? mutateChars(rng, text) : mutateBytes(rng, Buffer.from(text)).toString(rng.chance(0.8) ? 'utf8' : 'latin1');
}

/** Edits on UTF-16 code units (lone surrogates and all). */
function mutateChars(rng: Prng, text: string): string {
  let s = text;
  for (let e = rng.int(1, 5); e > 0; e--) {
    const at = rng.int(0, s.length);
    const piece = rng.chance(0.5) ? rng.pick(TOKENS) : String.fromCharCode(rng.int(0, 0xffff));
    s = rng.chance(0.7) ? s.slice(0, at) + piece + s.slice(at) : s.slice(0, at) + s.slice(at + rng.int(1, 8));
  }
  return s;
}

// ---------- realistic inputs ----------

function word(rng: Prng): string {
  return rng.pick(['alpha', 'beta', 'gamma', 'crawl', 'page', 'site', 'news', 'über', 'привет', '東京', 'x', 'a-b', 'café']);
}

function realisticHtml(rng: Prng): string {
  const links = Array.from({ length: rng.int(0, 20) }, () => {
    const href = rng.pick([
      `/p/${rng.int(0, 99)}`,
      `../${word(rng)}`,
      `http://site-${rng.int(0, 9)}.test/${word(rng)}`,
      `?q=${word(rng)}#x`,
      'mailto:a@b.test',
      'javascript:void(0)',
      `//cdn.test/${word(rng)}.png`,
    ]);
    return rng.pick([
      `<a href="${href}">${word(rng)}</a>`,
      `<area href='${href}'>`,
      `<link rel="alternate" href=${href}>`,
      `<img src="${href}">`,
      `<iframe src="${href}"></iframe>`,
      `<a rel="nofollow" href="${href}">x</a>`,
    ]);
  });
  return [
    '<!DOCTYPE html><html lang="en"><head>',
    rng.pick(['<meta charset="utf-8">', '<meta http-equiv="Content-Type" content="text/html; charset=windows-1251">', '', '<meta charset=shift_jis>']),
    `<title>${word(rng)} &amp; ${word(rng)}</title>`,
    rng.chance(0.3) ? `<base href="http://base.test/${word(rng)}/">` : '',
    rng.chance(0.3) ? '<meta name="robots" content="noindex, nofollow">' : '',
    rng.chance(0.3) ? `<link rel="canonical" href="/canon/${word(rng)}">` : '',
    '</head><body>',
    `<p>${Array.from({ length: rng.int(1, 40) }, () => word(rng)).join(' ')}</p>`,
    '<script>var a = "<a href=/not-a-link>";</script><!-- <a href="/commented"> -->',
    ...links,
    '</body></html>',
  ].join('\n');
}

function realisticRobots(rng: Prng): string {
  const lines: string[] = [];
  for (let g = rng.int(1, 4); g > 0; g--) {
    lines.push(`User-agent: ${rng.pick(['*', 'crawler-bot', 'Googlebot', 'crawler-bot/1.0'])}`);
    for (let r = rng.int(0, 6); r > 0; r--)
      lines.push(`${rng.pick(['Disallow', 'Allow', 'disallow', 'ALLOW'])}: /${rng.pick(['', 'private', 'p/*', '*.php$', 'a%2Fb', 'é', word(rng)])}`);
    if (rng.chance(0.3)) lines.push(`Crawl-delay: ${rng.pick(['1', '0.5', '-1', 'abc', '1e309', '10'])}`);
  }
  if (rng.chance(0.5)) lines.push(`Sitemap: http://a.test/${word(rng)}.xml`);
  return lines.join(rng.pick(['\n', '\r\n', '\r']));
}

function realisticUrl(rng: Prng): string {
  const scheme = rng.pick(['http', 'https', 'HTTP', 'ftp', '']);
  const host = rng.pick(['a.test', 'WWW.Example.COM.', 'münchen.de', 'xn--mnchen-3ya.de', '127.0.0.1', '[::1]', '0x7f.0.0.1', 'a..b', 'user:pw@a.test', '例え.テスト']);
  const port = rng.pick(['', ':80', ':443', ':8080', ':0', ':99999']);
  const path = rng.pick(['/', '', '/a/../b/./c', '/%7Euser/%41%2f', '/p/1', '/a b', '/€', '/index.html']);
  const query = rng.pick(['', '?b=2&a=1', '?utm_source=x&id=3', '?', '?a=%zz', '?q=ü']);
  const fragment = rng.pick(['', '#top', '#']);
  return `${scheme}${scheme ? '://' : ''}${host}${port}${path}${query}${fragment}`;
}

function realisticSitemap(rng: Prng): Buffer {
  const n = rng.int(0, 30);
  const locs = Array.from({ length: n }, () => `http://a.test/${word(rng)}/${rng.int(0, 999)}`);
  let text: string;
  switch (rng.int(0, 2)) {
    case 0:
      text = `<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">${locs
        .map((loc) => `<url><loc>${loc}</loc>${rng.chance(0.5) ? `<priority>${rng.pick(['0.5', '1.0', '2', 'x'])}</priority>` : ''}</url>`)
        .join('\n')}</urlset>`;
      break;
    case 1:
      text = `<?xml version="1.0"?><sm:sitemapindex xmlns:sm="http://www.sitemaps.org/schemas/sitemap/0.9">${locs.map((l) => `<sm:sitemap><sm:loc>${l}.xml</sm:loc></sm:sitemap>`).join('')}</sm:sitemapindex>`;
      break;
    default:
      text = locs.join('\n');
  }
  return rng.chance(0.3) ? gzipSync(text) : Buffer.from(text);
}

const ISO = '2026-01-01T00:00:00.000Z';
const HEX64 = 'a'.repeat(64);
const HEX16 = '0123456789abcdef';
const crawlUrl = { url: 'http://a.test/p/1', depth: 1, source: 'link', hops: 0 };
const fetched = {
  v: 1,
  fetchId: 'f1',
  url: 'http://a.test/',
  depth: 0,
  status: 200,
  headers: { 'content-type': 'text/html' },
  contentType: 'text/html',
  bodyKey: 'staging/f1',
  length: 10,
  truncated: false,
  fetchedAt: ISO,
};

/** One valid message per queue, the starting point of the mutations (a queue added later starts from `{ v: 1 }`). */
const VALID: Partial<Record<QueueName, unknown>> = {
  [QueueName.FrontierAdd]: { v: 1, urls: [crawlUrl, { ...crawlUrl, url: 'http://b.test/', kind: 'sitemap', priority: 0.5 }], batchId: 'b-1' },
  [QueueName.FrontierDone]: {
    v: 1,
    leaseId: 'l1',
    fetchId: 'f1',
    url: 'http://a.test/',
    host: 'a.test',
    kind: 'fetched',
    requested: true,
    status: 200,
    durationMs: 12,
    retry: crawlUrl,
  },
  [QueueName.DnsResolve]: { ...crawlUrl, v: 1, leaseId: 'l1', fetchId: 'f1', host: 'a.test' },
  [QueueName.Fetch]: { ...crawlUrl, v: 1, leaseId: 'l1', leaseExpiresAt: 1, shard: 'd1', fetchId: 'f1', host: 'a.test', ip: '127.0.0.1' },
  [QueueName.Parse]: fetched,
  [QueueName.ContentSeen]: {
    ...fetched,
    charset: 'utf-8',
    charsetSource: 'http',
    title: 't',
    noindex: false,
    nofollow: false,
    contentHash: HEX64,
    simhash: HEX16,
    links: [{ href: '/a', tag: 'a' }],
  },
  [QueueName.ExtractLinks]: {
    v: 1,
    url: 'http://a.test/',
    depth: 0,
    nofollow: false,
    links: [
      { href: '/a', tag: 'a', rel: 'next' },
      { href: 'http://b.test/', tag: 'url', priority: 1 },
    ],
  },
  [QueueName.FilterUrls]: { v: 1, urls: [crawlUrl] },
  [QueueName.SeenUrls]: { v: 1, urls: [crawlUrl], batchId: 'x' },
  [QueueName.DeadLetter]: { v: 1, queue: 'fetch', reason: 'v: bad', payload: { v: 2 }, at: ISO },
  [QueueName.Plugin]: {
    v: 1,
    hook: 'page',
    url: 'http://a.test/',
    depth: 0,
    status: 200,
    fetchedAt: ISO,
    contentType: 'text/html',
    charset: 'utf-8',
    noindex: false,
    contentHash: HEX64,
    simhash: HEX16,
    contentKey: 'pages/x',
  },
  [QueueName.PluginEvents]: { v: 1, plugin: 'png', type: 'alert', at: ISO, data: { n: 1 } },
};

/** The queue names a consumer decodes: every base queue and the sharded forms. */
const QUEUES: QueueName[] = [...(Object.keys(QUEUE_SCHEMAS) as QueueName[]), fetchQueue('d1'), pluginQueue('png'), pluginEventsQueue('png')];

function randomValue(rng: Prng, depth = 0): unknown {
  switch (rng.int(0, depth > 3 ? 6 : 9)) {
    case 0:
      return null;
    case 1:
      return rng.chance(0.5);
    case 2:
      return rng.pick([0, -1, 1, 2, 0.5, 1e308, -0, Number.MAX_SAFE_INTEGER + 2]);
    case 3:
      return '';
    case 4:
      return rng.pick(TOKENS).repeat(rng.int(1, 3));
    case 5:
      return 'x'.repeat(rng.pick([1, 64, 65, 8192, 8193, 20000]));
    case 6:
      return undefined;
    case 7:
      return Array.from({ length: rng.int(0, 4) }, () => randomValue(rng, depth + 1));
    case 8:
      return Object.fromEntries(
        Array.from({ length: rng.int(0, 3) }, () => [rng.pick(['v', 'url', 'urls', '__proto__', 'constructor', 'hook', 'x']), randomValue(rng, depth + 1)]),
      );
    default:
      return [1, 2, 3].map(() => randomValue(rng, depth + 1));
  }
}

/** Replaces, deletes or adds a value somewhere in a copy of `message`. */
function mutateMessage(rng: Prng, message: unknown): unknown {
  const copy = structuredClone(message) as any;
  for (let e = rng.int(1, 4); e > 0; e--) {
    let node = copy;
    for (let d = 0; d < 4 && node && typeof node === 'object'; d++) {
      const keys = Object.keys(node);
      if (!keys.length || rng.chance(0.4)) break;
      const key = rng.pick(keys);
      if (node[key] && typeof node[key] === 'object' && rng.chance(0.6)) node = node[key];
      else {
        if (rng.chance(0.3)) delete node[key];
        else node[key] = randomValue(rng);
        node = null;
      }
    }
    if (node && typeof node === 'object') node[rng.pick(['v', 'extra', 'url', '0', 'hook'])] = randomValue(rng);
  }
  return copy;
}

// ---------- the targets ----------

describe('fuzz (seeded; FUZZ_SEED replays)', () => {
  it('decodeHtml + parseHtmlPage: never throw, never hang', async () => {
    const contentTypes = [
      undefined,
      'text/html',
      'text/html; charset=utf-8',
      'text/html; charset=windows-1251',
      'text/html; charset="bogus"',
      'text/html; charset=utf-16',
      'text/html; charset=',
    ];
    await fuzz(
      'html',
      (rng) => ({
        bytes: rng.chance(0.15) ? randomBytes(rng, 4096) : mutateBytes(rng, Buffer.from(realisticHtml(rng))),
        contentType: rng.pick(contentTypes),
        images: rng.chance(0.3),
        maxLinks: rng.pick([undefined, 0, 1, 5000]),
      }),
      ({ bytes, contentType, images, maxLinks }) => {
        const decoded = decodeHtml(bytes, contentType);
        const page = parseHtmlPage(decoded.text, { images, maxLinks });
        // maxLinks bounds the page links and, separately, the images (html-page-parser.ts).
        const img = page.links.filter((l) => l.tag === 'img').length;
        expect(page.links.length - img).toBeLessThanOrEqual(maxLinks ?? 5000);
        expect(img).toBeLessThanOrEqual(images ? (maxLinks ?? 5000) : 0);
      },
      (i) => `${i.contentType} ${JSON.stringify(i.bytes.toString('latin1'))}`,
    );
  });

  it('RobotsPolicy.fromResponse: never throws on any body, never hangs', async () => {
    const urls = ['http://a.test/', 'http://a.test/private/x', 'http://a.test/p/1.php', 'http://a.test/a%2Fb', 'http://a.test/é?x=1'];
    await fuzz(
      'robots',
      (rng) => ({
        status: rng.pick([200, 200, 200, 204, 301, 404, 429, 500, 503]),
        body: rng.chance(0.1) ? null : rng.chance(0.15) ? randomBytes(rng, 2048).toString('latin1') : mutateText(rng, realisticRobots(rng)),
        maxBytes: rng.pick([undefined, 16, 500 * 1024]),
      }),
      ({ status, body, maxBytes }) => {
        const policy = RobotsPolicy.fromResponse(status, body, 'http://a.test/robots.txt', 'crawler-bot/1.0 (+http://bot.test)', { maxBytes });
        for (const url of urls) expect(typeof policy.isAllowed(url)).toBe('boolean');
        policy.crawlDelayMs();
        policy.sitemaps();
        RobotsPolicy.fromJSON(JSON.parse(JSON.stringify(policy.toJSON())));
      },
      (i) => JSON.stringify(i),
    );
  });

  it('canonicalize + resolveLink: never throw, never hang; a canonical URL is canonical', async () => {
    const idempotence: string[] = [];
    await fuzz(
      'url',
      (rng) => ({
        href: rng.chance(0.1) ? randomBytes(rng, 200).toString('latin1') : mutateText(rng, realisticUrl(rng)),
        page: rng.chance(0.8) ? realisticUrl(rng) : mutateText(rng, realisticUrl(rng)),
        base: rng.chance(0.3) ? mutateText(rng, realisticUrl(rng)) : undefined,
      }),
      ({ href, page, base }) => {
        const resolved = resolveLink(href, page, base);
        expect(resolved === null || /^https?:/.test(resolved)).toBe(true);
        const result = canonicalize(resolved ?? href, rng0(page));
        if (result.ok) {
          const again = canonicalize(result.url);
          if (!again.ok || again.url !== result.url) idempotence.push(`${result.url} → ${again.ok ? again.url : again.reason}`);
        }
      },
      (i) => JSON.stringify(i),
    );
    // Reported, not failed on: canonicalisation that is not a fixed point only costs a duplicate fetch.
    if (idempotence.length) console.log(`canonicalize not idempotent on ${idempotence.length} inputs, e.g.:\n  ${idempotence.slice(0, 5).join('\n  ')}`);
  });

  it('parseSitemap: never rejects, never hangs (gzip included)', async () => {
    await fuzz(
      'sitemap',
      (rng) => ({
        body: rng.chance(0.1)
          ? randomBytes(rng, 4096)
          : rng.chance(0.1)
            ? Buffer.concat([Buffer.from([0x1f, 0x8b]), randomBytes(rng, 512)])
            : mutateBytes(rng, realisticSitemap(rng)),
        maxUrls: rng.pick([0, 1, 50_000]),
      }),
      async ({ body, maxUrls }) => {
        const sitemap = await parseSitemap(body, { maxBytes: 1024 * 1024, maxUrls });
        expect(sitemap.entries.length).toBeLessThanOrEqual(maxUrls);
      },
      (i) => `${i.maxUrls} ${JSON.stringify(i.body.toString('latin1'))}`,
    );
  });

  it('decodeJob: every queue answers a payload or throws InvalidMessageError, nothing else', async () => {
    // The samples are valid, so the mutations start close to what producers send.
    for (const queue of QUEUES) {
      const sample = VALID[queue.split('.')[0] as QueueName];
      if (sample !== undefined) expect(() => decodeJob(queue, sample)).not.toThrow();
    }
    await fuzz(
      'decodeJob',
      (rng) => {
        const queue = rng.pick(QUEUES);
        const valid = VALID[queue.split('.')[0] as QueueName] ?? { v: 1 };
        let data: unknown;
        switch (rng.int(0, 3)) {
          case 0: // a message of another queue
            data = VALID[rng.pick(Object.keys(VALID) as QueueName[])];
            break;
          case 1: {
            // mutated JSON text, as a broken producer might write it
            const text = mutateText(rng, JSON.stringify(valid));
            try {
              data = JSON.parse(text);
            } catch {
              data = text;
            }
            break;
          }
          case 2:
            data = randomValue(rng);
            break;
          default:
            data = mutateMessage(rng, valid);
        }
        return { queue, data };
      },
      ({ queue, data }) => {
        try {
          decodeJob(queue, data);
        } catch (error) {
          if (!(error instanceof InvalidMessageError)) throw error;
          expect(error.queue).toBe(queue);
          expect(error.reason.length).toBeGreaterThan(0);
        }
      },
      (i) => JSON.stringify(i)?.slice(0, 2000) ?? String(i),
    );
  });
});

/** The page URL as a base for canonicalize, or none if it is not absolute. */
function rng0(page: string): string | undefined {
  try {
    return new URL(page).href;
  } catch {
    return undefined;
  }
}
