/**
 * Conformance with google/robotstxt's robots_test.cc (as JSON records in ../test-fixtures, see its
 * LICENSE-NOTE.txt). The RFC 9309 subset (googleSpecific: false, no requiresCallerPercentEncoding) must
 * pass in full. The other records describe Google's own extensions; they are run for information and
 * every difference must be one listed below with its reason.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { canonicalize } from '@crawler/url';
import { RobotsPolicy } from './robots-policy';
import { productToken } from './product-token';
import { robotsUrlFor } from './robots-url';

interface Case {
  id: string;
  group: string;
  robotsTxt: string;
  userAgent: string;
  url: string;
  expectedAllowed: boolean;
  googleSpecific: boolean;
  requiresCallerPercentEncoding?: boolean;
  conflictsWithRfc9309?: boolean;
}

const cases = JSON.parse(readFileSync(join(__dirname, '..', 'test-fixtures', 'google-robotstxt-cases.json'), 'utf8')) as Case[];

const isStrict = (c: Case) => c.googleSpecific === false && !c.requiresCallerPercentEncoding;

/** Our answer, or a reason why the case cannot be asked through our API. */
function run(c: Case): boolean | string {
  if (productToken(c.userAgent) === '') return 'n/a: empty user agent (configuration error for us)';
  let robotsUrl: string;
  try {
    robotsUrl = robotsUrlFor(c.url);
  } catch {
    return 'n/a: URL is not absolute (our callers pass absolute URLs)';
  }
  return RobotsPolicy.fromResponse(200, c.robotsTxt, robotsUrl, c.userAgent).isAllowed(c.url);
}

/** Google-only behaviour we do not reproduce, by test name. */
const googleOnlyDifferences: Record<string, string> = {
  ID_LineSyntax_Line: "a line without ':' ('disallow /') is a Google extension; RFC 9309 requires the colon",
  ID_UserAgentValueCaseInsensitive: "'User-Agent: FOO BAR' is not a valid product token; matching 'Foo' to it is Google's up-to-first-space rule",
  GoogleOnly_AcceptUserAgentUpToFirstSpace: "Google's up-to-first-space rule for robots.txt user-agent lines",
  ID_Encoding: 'raw non-ASCII URL: the caller must percent-encode (RFC 9309 §2.2.2); our URLs are always WHATWG-serialised',
  GoogleOnly_IndexHTMLisDirectory: "Google treats 'Allow: /x/index.html' as allowing '/x/'",
  GoogleOnly_LineTooLong: 'Google truncates lines at 16664 bytes; robots-parser reads the whole line',
  // By id: same test name, different reason.
  'ID_Encoding#6':
    'we follow RFC 9309 §2.2.2 (rule /foo/bar/%62%61%7A matches /foo/bar/baz); Google compares octets. ' +
    'Our URLs are canonical (unreserved escapes decoded), so octet matching would miss such rules',
};

const testName = (id: string) => id.replace(/#\d+$/, '');
const differenceReason = (id: string): string | undefined => googleOnlyDifferences[id] ?? googleOnlyDifferences[testName(id)];

describe('google/robotstxt cases through RobotsPolicy', () => {
  const strict = cases.filter(isStrict);

  it.each(strict.map((c) => [c.id, c] as const))('RFC 9309 subset: %s', (_id, c) => {
    expect(run(c)).toBe(c.expectedAllowed);
  });

  // The pipeline asks with canonical URLs (@crawler/url). Canonicalisation sorts the query, so a rule that
  // spells a query in another order no longer matches: robots.txt applies to the URL actually requested.
  const reorderedByCanonicalisation = new Set(['ID_Encoding#1']);

  it.each(strict.map((c) => [c.id, c] as const))('RFC 9309 subset with the canonical URL: %s', (id, c) => {
    const canonical = canonicalize(c.url);
    if (!canonical.ok) throw new Error(`${c.url}: ${canonical.reason}`);
    const got = run({ ...c, url: canonical.url });
    expect(got).toBe(reorderedByCanonicalisation.has(id) ? !c.expectedAllowed : c.expectedAllowed);
  });

  it('other records: every difference is a known Google-only behaviour', () => {
    const unexplained = cases
      .filter((c) => !isStrict(c))
      .filter((c) => run(c) !== c.expectedAllowed && typeof run(c) === 'boolean')
      .filter((c) => differenceReason(c.id) === undefined)
      .map((c) => c.id);
    expect(unexplained).toEqual([]);
  });

  it('summary', () => {
    const rows = cases.map((c) => ({ c, got: run(c) }));
    const pass = (rs: typeof rows) => rs.filter((r) => r.got === r.c.expectedAllowed).length;
    const strictRows = rows.filter((r) => isStrict(r.c));
    const others = rows.filter((r) => !isStrict(r.c));
    const lines = [
      `google-robotstxt-cases.json: RFC 9309 subset ${pass(strictRows)}/${strictRows.length} pass; ` +
        `other records ${pass(others)}/${others.length} pass (${others.filter((r) => typeof r.got === 'string').length} not applicable)`,
      ...others
        .filter((r) => r.got !== r.c.expectedAllowed)
        .map((r) => `  ${r.c.id}: expected ${r.c.expectedAllowed}, got ${r.got}${typeof r.got === 'boolean' ? ` — ${differenceReason(r.c.id)}` : ''}`),
    ];
    console.log(lines.join('\n'));
    expect(pass(strictRows)).toBe(strictRows.length);
  });
});
