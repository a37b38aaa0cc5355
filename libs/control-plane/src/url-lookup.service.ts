import { readFileSync } from 'node:fs';
import { Inject, Injectable } from '@nestjs/common';
import * as iconv from 'iconv-lite';
import { PAGE_STORE, PageStore } from '@crawler/content-store';
import { FRONTIER_STORE, FrontierStore } from '@crawler/frontier-store';
import { DuplicateRecord, PageRecord, RECORDS_STORE, RecordsStore } from '@crawler/records';
import { CRAWLER_CONFIG, CrawlerConfig } from '@crawler/config';
import { canonicalize, describeVerdict, loadUserRules, type UrlRules } from '@crawler/url';

/** What content-seen recorded of a stored page. */
export type UrlRecord = PageRecord;

/** What content-seen recorded for a duplicate: the original (whose record says where it is stored). */
export type DuplicateOf = DuplicateRecord;

export type UrlLookup = (
  | { url: string; state: 'stored'; record: UrlRecord; host: HostSummary }
  | { url: string; state: 'duplicate'; duplicateOf: DuplicateOf; host: HostSummary }
  | { url: string; state: 'unknown'; host: HostSummary }
) & {
  /**
   * What the crawl's user URL rules make of it as a link found on a page (seeds are exempt): the rule that
   * excludes it, or the include rules it matches none of; absent when they let it through.
   */
  userRules?: string;
};

export interface HostSummary {
  host: string;
  queued: number;
  inFlight: number;
  fetched: number;
  nextEligibleAt: string | null;
}

export interface StoredContent {
  url: string;
  contentKey: string;
  /** The stored page's URL when `url` is a duplicate of it. */
  originalUrl?: string;
  /** The body decoded to text from its charset. */
  text: string;
  meta: Record<string, string>;
}

export class UrlLookupError extends Error {}

/**
 * A URL's record, read-only: what content-seen recorded of it (the RecordsStore: its stored page, or the
 * original it duplicates) and the frontier's view of its host; and the stored body from the content store. The URL is tried as given and in canonical form, the
 * spelling the pipeline records.
 */
@Injectable()
export class UrlLookupService {
  /** The user's URL rules as the URL filter reads them; a problem with them is the filter's to refuse at start. */
  private readonly userRules: UrlRules;
  private readonly userRulesProblems: string[] = [];

  constructor(
    @Inject(RECORDS_STORE) private readonly records: RecordsStore,
    @Inject(PAGE_STORE) private readonly pages: PageStore,
    @Inject(FRONTIER_STORE) private readonly frontier: FrontierStore,
    @Inject(CRAWLER_CONFIG) config: CrawlerConfig,
  ) {
    this.userRules = loadUserRules(config.filter, (path) => readFileSync(path, 'utf8'), this.userRulesProblems);
  }

  async lookup(input: string): Promise<UrlLookup> {
    const found = await this.find(input);
    const userRules = this.userRulesVerdict(found.url);
    return userRules ? { ...found, userRules } : found;
  }

  private userRulesVerdict(url: string): string | undefined {
    if (this.userRulesProblems.length) return `not known here: ${this.userRulesProblems[0]}`;
    const canonical = canonicalize(url);
    const verdict = canonical.ok ? this.userRules.judge(canonical.parsed) : undefined;
    return verdict && describeVerdict(verdict);
  }

  private async find(input: string): Promise<UrlLookup> {
    const candidates = spellings(input);
    const found = await this.records.lookup(candidates);
    const stored = found.findIndex(({ page }) => page !== null);
    if (stored >= 0) return { url: candidates[stored], state: 'stored', record: found[stored].page!, host: await this.host(candidates[stored]) };
    const duplicate = found.findIndex(({ duplicateOf }) => duplicateOf !== null);
    if (duplicate >= 0) {
      const url = candidates[duplicate];
      return { url, state: 'duplicate', duplicateOf: found[duplicate].duplicateOf!, host: await this.host(url) };
    }
    const url = candidates[candidates.length - 1];
    return { url, state: 'unknown', host: await this.host(url) };
  }

  /** The stored body of a URL (its original's for a duplicate), or null when nothing is stored for it. */
  async content(input: string): Promise<StoredContent | null> {
    const found = await this.lookup(input);
    if (found.state === 'unknown') return null;
    let contentKey = found.state === 'stored' ? found.record.contentKey : undefined;
    if (found.state === 'duplicate') {
      const original = await this.lookup(found.duplicateOf.original);
      if (original.state !== 'stored') return null;
      contentKey = original.record.contentKey;
    }
    const page = await this.pages.read(contentKey!, { meta: true });
    if (!page) return null;
    const meta = Object.fromEntries(Object.entries(page.meta ?? {}).map(([k, v]) => [k, typeof v === 'string' ? v : JSON.stringify(v)]));
    const charset = meta.charset && iconv.encodingExists(meta.charset) ? meta.charset : 'utf-8';
    return {
      url: found.url,
      contentKey: contentKey!,
      originalUrl: found.state === 'duplicate' ? found.duplicateOf.original : undefined,
      text: iconv.decode(page.body, charset),
      meta,
    };
  }

  private async host(url: string): Promise<HostSummary> {
    const host = new URL(url).host;
    const info = await this.frontier.hostInfo(host);
    return {
      host,
      queued: info.queued,
      inFlight: info.inFlight,
      fetched: info.fetched,
      nextEligibleAt: info.nextAt === null ? null : new Date(info.nextAt).toISOString(),
    };
  }
}

/** The URL as given (WHATWG-parsed) and its canonical form, distinct, canonical last. */
function spellings(input: string): string[] {
  let parsed: string;
  try {
    parsed = new URL(input.trim()).href;
  } catch {
    throw new UrlLookupError(`not an absolute URL: ${JSON.stringify(input)}`);
  }
  const canonical = canonicalize(parsed);
  return canonical.ok && canonical.url !== parsed ? [parsed, canonical.url] : [parsed];
}
