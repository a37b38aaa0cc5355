/**
 * The parser's output, pinned: every page of a fixed corpus (parse-corpus.ts) parsed by parsePage must give
 * exactly what the golden file recorded — links (tag, href, rel), title, canonical, base, lang, robots flags,
 * charset, content hash and simhash — so that a faster parser is the same parser. The simhash and the content
 * hash are persisted keys; a change to either strands what is stored.
 *
 * A deliberate change of the output re-records the golden file: RECORD_PARSE_GOLDEN=1 npx jest test/parser
 * (and the commit says why the output changed).
 */
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadConfig } from '@crawler/config';
import { ContentParserService, type ParsePageOptions, type ParseResult, parsePage } from '@crawler/content-parser';
import { type CorpusPage, parseCorpus } from './parse-corpus';

const GOLDEN = join(__dirname, 'test-fixtures', 'parse-golden.json');
const BOT = 'test-bot';
/** The crawler's defaults, and a tight link budget with images on (truncation and the img links). */
const VARIANTS: Record<string, ParsePageOptions> = {
  default: { maxLinks: 5000, images: false, botName: BOT },
  tight: { maxLinks: 3, images: true, botName: BOT },
};

type Summary = Record<string, unknown>;

/** What the golden file keeps of a result: the fields in full, the links of a benchmark page as a digest. */
function summary(page: CorpusPage, result: ParseResult): Summary {
  if (!result.ok) return { reason: result.reason };
  const { links, title, lang, baseHref, canonical, noindex, nofollow, charset, charsetSource, contentHash, simhash } = result.page;
  const tuples = links.map((l) => [l.tag, l.href, l.rel ?? null]);
  const linkSummary = page.name.startsWith('tricky/')
    ? tuples
    : { count: links.length, sha256: createHash('sha256').update(JSON.stringify(tuples)).digest('hex').slice(0, 16) };
  return JSON.parse(JSON.stringify({ title, lang, baseHref, canonical, noindex, nofollow, charset, charsetSource, contentHash, simhash, links: linkSummary }));
}

function variantsOf(page: CorpusPage): string[] {
  return page.name.startsWith('tricky/') ? Object.keys(VARIANTS) : ['default'];
}

describe('parsePage on the fixed corpus', () => {
  const corpus = parseCorpus();

  it('has pages of every kind', () => {
    expect(corpus.length).toBeGreaterThan(340);
    expect(corpus.filter((p) => p.body.length > 60_000).length).toBeGreaterThan(10);
  });

  it('gives exactly the recorded output', () => {
    const actual: Record<string, Summary> = {};
    for (const page of corpus) {
      for (const variant of variantsOf(page)) actual[`${variant} ${page.name}`] = summary(page, parsePage(page.fetched, page.body, VARIANTS[variant]));
    }
    if (process.env.RECORD_PARSE_GOLDEN === '1') writeFileSync(GOLDEN, `${JSON.stringify(actual, null, 0).replace(/,"(default|tight) /g, ',\n"$1 ')}\n`);
    const golden = JSON.parse(readFileSync(GOLDEN, 'utf8')) as Record<string, Summary>;
    expect(Object.keys(actual)).toEqual(Object.keys(golden));
    for (const key of Object.keys(golden)) expect({ key, ...actual[key] }).toEqual({ key, ...golden[key] });
  });

  // The threads run the compiled worker (dist/, built by `npm test`'s pretest).
  it('gives the same results on a parse thread as in this one', async () => {
    const parser = new ContentParserService(loadConfig({}, { 'parser.threads': 1 }));
    try {
      const threaded = await Promise.all(corpus.map((page) => parser.parseAsync(page.fetched, page.body)));
      threaded.forEach((result, i) => expect(result).toEqual(parser.parse(corpus[i].fetched, corpus[i].body)));
    } finally {
      await parser.onApplicationShutdown();
    }
  });
});
