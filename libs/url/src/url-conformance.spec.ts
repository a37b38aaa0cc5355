/**
 * Conformance of resolveLink/canonicalize against public test data (in ../test-fixtures with its
 * LICENSE-NOTE.txt): RFC 3986 §5.4 reference resolution and the WHATWG URL Standard's urltestdata.json.
 *
 * Each case must give the standard's answer, except for a short, reasoned list of deliberate or platform
 * differences; those are printed in the summary so a change in either direction is visible.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { canonicalize } from './url-canonicalizer';
import { resolveLink } from './link-resolver';

function fixture<T>(name: string): T {
  return JSON.parse(readFileSync(join(__dirname, '..', 'test-fixtures', name), 'utf8')) as T;
}

const isHttp = (href: string) => /^https?:/.test(href);

describe('RFC 3986 §5.4 reference resolution (rfc3986-resolution.json)', () => {
  interface Resolution {
    id: string;
    base: string;
    reference: string;
    expected: string;
    expectedAlternatives?: string[];
    whatwgHref: string;
  }
  const suite = fixture<{
    resolution: Resolution[];
    removeDotSegments: { input: string; expected: string }[];
    normalizationEquivalences: { section: string; urls: string[]; normalForm?: string; equivalent?: boolean }[];
  }>('rfc3986-resolution.json');

  /** Where resolveLink's answer is not the RFC's, and why. Everything else must equal the RFC. */
  const differsFromRfc: Record<string, string> = {
    '5.4.1-01': 'g:h is not http(s): resolveLink drops it (null)',
    '5.4.1-06': "WHATWG serialises the empty path of http://g as '/' (same normal form by RFC 3986 §6.2.3)",
    '5.4.1-15': 'an empty href is a link to the page itself: resolveLink returns null by design',
  };

  const rows = suite.resolution.map((c) => {
    const got = resolveLink(c.reference, c.base);
    const rfcOk = got === c.expected || (c.expectedAlternatives ?? []).includes(got ?? '');
    // WHATWG's answer, filtered by our rules (http(s) only, empty href → null).
    const ours = c.reference.trim() === '' || !isHttp(c.whatwgHref) ? null : c.whatwgHref;
    return { ...c, got, rfcOk, ours };
  });

  it.each(rows.map((r) => [r.id, r.reference, r] as const))('%s %j', (_id, _ref, r) => {
    expect(r.got).toBe(r.ours);
    if (r.rfcOk) expect(differsFromRfc[r.id]).toBeUndefined();
    else expect(differsFromRfc[r.id]).toBeDefined();
  });

  it('summary', () => {
    const differing = rows.filter((r) => !r.rfcOk);
    console.log(
      `RFC 3986 §5.4: ${rows.length - differing.length}/${rows.length} equal the RFC answer; ` +
        `${rows.filter((r) => r.got === r.ours).length}/${rows.length} equal WHATWG+crawler rules.\n` +
        differing.map((r) => `  ${r.id} ${JSON.stringify(r.reference)} → ${r.got} (RFC ${r.expected}): ${differsFromRfc[r.id]}`).join('\n'),
    );
    expect(differing.map((r) => r.id).sort()).toEqual(Object.keys(differsFromRfc).sort());
  });

  it('§5.2.4 remove_dot_segments examples', () => {
    for (const { input, expected } of suite.removeDotSegments) {
      const got = new URL(resolveLink(input, 'http://a/') as string).pathname;
      expect(got).toBe(expected.startsWith('/') ? expected : `/${expected}`);
    }
  });

  it('§6.2 equivalent URLs canonicalise alike (example:// cases rewritten to http://)', () => {
    for (const group of suite.normalizationEquivalences) {
      const asHttp = (u: string) => u.replace(/^example:/i, 'http:');
      const canon = group.urls.map((u) => {
        const r = canonicalize(asHttp(u));
        return r.ok ? r.url : r.reason;
      });
      if (group.equivalent === false) {
        // RFC 3986 §6.2.3 keeps "/?" and "/#" distinct from "/"; a crawler deliberately merges them: an empty
        // query selects nothing, and fragments are never sent to the server (§6.1 lets applications choose).
        expect(new Set(canon).size).toBe(1);
      } else {
        expect(canon).toEqual(group.urls.map(() => asHttp(group.normalForm as string)));
      }
    }
  });
});

describe('WHATWG URL urltestdata.json', () => {
  interface UrlTest {
    input: string;
    base: string | null;
    href?: string;
    failure?: boolean;
  }
  const cases = fixture<(UrlTest | string)[]>('urltestdata.json').filter((c): c is UrlTest => typeof c !== 'string');

  /**
   * Cases where Node 20's built-in URL (ada) predates the current standard: the suite (July 2026) expects
   * these hosts to parse, Node 20 rejects them. resolveLink returns null; the URL is lost, never mangled.
   */
  const nodeLagsStandard = new Set([
    'http://a.b.c.xn--pokxncvks',
    'http://10.0.0.xn--pokxncvks',
    'http://a.b.c.XN--pokxncvks',
    'http://a.b.c.Xn--pokxncvks',
    'http://10.0.0.XN--pokxncvks',
    'http://10.0.0.xN--pokxncvks',
    'https://xn--/',
  ]);

  /** Our expectation: the standard's href if it is http(s), null for failures and other schemes. */
  function expected(c: UrlTest): string | null {
    if (c.failure || c.href === undefined || !isHttp(c.href)) return null;
    // An href that is empty after HTML whitespace stripping is a self-link: null by design.
    return c.input.replace(/^[\t\n\f\r ]+|[\t\n\f\r ]+$/g, '') === '' ? null : c.href;
  }

  // Slice 1: relative resolution, every case whose base is an http(s) URL.
  const relative = cases.filter((c) => c.base !== null && isHttp(c.base));
  // Slice 2: absolute http(s) inputs (base null in the suite). They are resolved against a page of the
  // *other* special scheme: WHATWG then parses them exactly as with no base (a same-scheme base would turn
  // `http:foo` into a relative reference).
  const absolute = cases
    .filter((c) => c.base === null)
    .map((c) => ({ c, scheme: /^(https?):/i.exec(c.input.replace(/^[\x00-\x20]+/, '').replace(/[\t\n\r]/g, ''))?.[1] }))
    .filter((x): x is { c: UrlTest; scheme: string } => x.scheme !== undefined)
    .map(({ c, scheme }) => ({
      ...c,
      base: scheme.toLowerCase() === 'http' ? 'https://page.invalid/dir/page' : 'http://page.invalid/dir/page',
    }));

  const run = (slice: UrlTest[]) => slice.map((c) => ({ c, got: resolveLink(c.input, c.base as string), want: expected(c) }));
  const results = { relative: run(relative), absolute: run(absolute) };

  for (const [name, rows] of Object.entries(results)) {
    it(`${name}: every case gives the standard's answer (known Node 20 gaps aside)`, () => {
      const unexpected = rows.filter((r) => r.got !== r.want && !nodeLagsStandard.has(r.c.input));
      expect(unexpected.map((r) => ({ input: r.c.input, base: r.c.base, want: r.want, got: r.got }))).toEqual([]);
    });
  }

  it('summary', () => {
    const lines = Object.entries(results).map(([name, rows]) => {
      const pass = rows.filter((r) => r.got === r.want).length;
      const count = (f: (c: UrlTest) => boolean) => rows.filter((r) => f(r.c)).length;
      const failures = count((c) => c.failure === true);
      const otherScheme = count((c) => c.href !== undefined && !isHttp(c.href));
      const selfLinks = count((c) => c.href !== undefined && isHttp(c.href) && expected(c) === null);
      return (
        `  ${name}: ${pass}/${rows.length} pass; null expected for ${failures} parse failures, ` +
        `${otherScheme} non-http results, ${selfLinks} empty hrefs (WHATWG: the base itself; ours: null by design)`
      );
    });
    const gaps = Object.values(results)
      .flat()
      .filter((r) => r.got !== r.want)
      .map((r) => `  Node 20 gap: ${JSON.stringify(r.c.input)} → ${r.got}, standard says ${r.want}`);
    console.log(['WHATWG urltestdata.json through resolveLink:', ...lines, ...gaps].join('\n'));
    expect(results.relative.length + results.absolute.length).toBeGreaterThan(400);
  });

  it('canonicalize is a fixed point on every http(s) URL the suite produces', () => {
    const hrefs = cases.map((c) => c.href).filter((h): h is string => h !== undefined && isHttp(h));
    const unstable = hrefs.flatMap((h) => {
      const once = canonicalize(h);
      if (!once.ok) return [];
      const twice = canonicalize(once.url);
      return twice.ok && twice.url === once.url ? [] : [{ h, once: once.url, twice }];
    });
    expect(unstable).toEqual([]);
  });
});
