/**
 * The URL filter's decide rules, in the order they are asked. This list is the one place that names each
 * rule: the reason a rejected URL is counted under (`filtered.<name>`), the rule a debug log line names, and
 * the list docs/url-lifecycle.md shows (a test fails when that copy is stale). UrlFilterService supplies
 * each rule's test (its type requires one per rule).
 *
 * The first rule with an opinion decides, and the rest are not asked (Heritrix's DecideRuleSequence lets the
 * last opinion win instead). First-wins because:
 * - the rules are ordered cheapest first, and the last ones read the shared store (scope, robots.txt, the
 *   page budget): stopping at the first rejection keeps round trips off the hot path, which runs for every
 *   link;
 * - two rules act as well as judge (a seed registers its scope, the budget counts a page), and must act only
 *   for URLs every earlier rule let through;
 * - the reason counted is the first rule that failed, as the filter always counted it.
 * The price: an exception cannot be a later rule that overrides an earlier one. It is a rule placed just
 * before the one it exempts from (`plugin-claim`), and every other rule still applies to the URL.
 *
 * The user's URL rules (`excluded`, `not-included`) come after every rule of the crawler's own, the safety
 * rules among them (scheme, credentials, port, blocklist, scope, robots.txt): they only ever reject, and
 * whatever they say, a URL an earlier rule refused stays refused. Before the page budget, so that a URL they
 * drop never spends its host's budget.
 */
export const FILTER_RULES = [
  { name: 'malformed', stage: 'canonical', appliesTo: 'every URL', decision: 'reject', when: 'it does not parse as a URL, or has no host' },
  { name: 'scheme', stage: 'canonical', appliesTo: 'every URL', decision: 'reject', when: 'its scheme is not http or https' },
  { name: 'credentials', stage: 'canonical', appliesTo: 'every URL', decision: 'reject', when: 'it carries a user name or password' },
  { name: 'port', stage: 'url', appliesTo: 'every URL', decision: 'reject', when: 'its port is one no HTTP request should reach' },
  {
    name: 'too-long',
    stage: 'url',
    appliesTo: 'every URL',
    decision: 'reject',
    when: 'its canonical form is longer than URL_FILTER_MAX_URL_LENGTH, or the link is longer than a message carries (8,192 characters: it comes cut, judged on nothing else)',
  },
  { name: 'too-many-redirects', stage: 'url', appliesTo: 'every URL', decision: 'reject', when: 'it took more redirect hops than DOWNLOADER_MAX_REDIRECTS' },
  { name: 'too-deep', stage: 'url', appliesTo: 'every URL', decision: 'reject', when: 'it is more than URL_FILTER_MAX_DEPTH links from its seed' },
  { name: 'blocklisted', stage: 'url', appliesTo: 'every URL', decision: 'reject', when: 'its host is a domain of URL_FILTER_BLOCKLIST_FILE, or under one' },
  {
    name: 'plugin-claim',
    stage: 'url',
    appliesTo: 'pages',
    decision: 'exempt',
    when: 'its extension is blocked but an enabled plugin claims it (by extension or path): `extension` is not asked',
  },
  { name: 'extension', stage: 'url', appliesTo: 'pages', decision: 'reject', when: 'its file extension is blocked (URL_FILTER_BLOCKED_EXTENSIONS)' },
  { name: 'too-many-params', stage: 'url', appliesTo: 'pages', decision: 'reject', when: 'it has more query parameters than URL_FILTER_MAX_QUERY_PARAMS' },
  { name: 'trap.repeated-path', stage: 'url', appliesTo: 'pages', decision: 'reject', when: 'a path segment or run repeats more than URL_FILTER_MAX_PATH_REPEATS times' },
  { name: 'trap.calendar', stage: 'url', appliesTo: 'pages', decision: 'reject', when: 'it names a date further than URL_FILTER_CALENDAR_WINDOW_DAYS from today' },
  {
    name: 'out-of-scope',
    stage: 'url',
    appliesTo: 'every URL',
    decision: 'reject',
    when: 'it is outside URL_FILTER_SCOPE (a seed, or a seed’s redirect, registers its scope instead)',
  },
  { name: 'robots', stage: 'url', appliesTo: 'every URL', decision: 'reject', when: 'the site’s robots.txt, already cached, disallows it' },
  {
    name: 'excluded',
    stage: 'url',
    appliesTo: 'every URL',
    decision: 'reject',
    when: 'a user exclude rule (URL_FILTER_EXCLUDE, URL_FILTER_RULES_FILE) for its host or the whole crawl matches it; seeds are exempt',
  },
  {
    name: 'not-included',
    stage: 'url',
    appliesTo: 'pages',
    decision: 'reject',
    when: 'user include rules (URL_FILTER_INCLUDE, URL_FILTER_RULES_FILE) apply to its host and none matches it; seeds are exempt',
  },
  {
    name: 'host-budget',
    stage: 'batch',
    appliesTo: 'pages',
    decision: 'reject',
    when: 'its host has had URL_FILTER_MAX_PAGES_PER_HOST pages (counted here, for the whole batch at once)',
  },
  { name: 'accept', stage: 'batch', appliesTo: 'every URL', decision: 'accept', when: 'no rule above rejected it' },
] as const satisfies readonly FilterRuleSpec[];

export interface FilterRuleSpec {
  readonly name: string;
  /**
   * When the rule is asked: `canonical` while the URL is brought to its canonical form (canonicalize()
   * reports which of these failed), `url` per URL on the canonical form, `batch` once for the batch's
   * survivors.
   */
  readonly stage: 'canonical' | 'url' | 'batch';
  /** `pages`: every URL but sitemaps (XML, often `.xml.gz`, and never a trap or a page of the budget). */
  readonly appliesTo: 'every URL' | 'pages';
  /** `exempt`: no opinion of its own, but the next rule is not asked. */
  readonly decision: 'reject' | 'exempt' | 'accept';
  /** When the rule has its opinion. */
  readonly when: string;
}

export type FilterRuleName = (typeof FILTER_RULES)[number]['name'];

/** Why a URL was dropped: the name of the rule that rejected it, counted as `filtered.<reason>`. */
export type FilterReason = Extract<(typeof FILTER_RULES)[number], { decision: 'reject' }>['name'];

/** The rules asked per URL, by name: those UrlFilterService gives a test. */
export type UrlRuleName = Extract<(typeof FILTER_RULES)[number], { stage: 'url' }>['name'];
