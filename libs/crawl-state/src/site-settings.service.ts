import { Inject, Injectable, Module } from '@nestjs/common';
import { CRAWLER_CONFIG, CrawlerConfig } from '@crawler/config';
import { FILE_ONLY, liveSiteRule, resolveSiteSettings, ResolvedSite, SiteRule, siteRule, SiteSettings } from '@crawler/site-settings';
import { STATE_STORE, StateStore } from '@crawler/state';

/** The sites' settings as the control plane lists them: the file's, and the live ones over them. */
export interface SiteRulesListing {
  file: { pattern: string; settings: SiteSettings; at?: string }[];
  live: { pattern: string; settings: SiteSettings }[];
}

/** Hosts whose settings are remembered between two reads of the live ones, at most (a crawl of many hosts asks for a few at a time). */
const RESOLVED_KEPT = 10_000;

/**
 * The per-site settings in force: SITE_SETTINGS_FILE's rules, and over them the live ones the control plane
 * writes (`PUT /sites/:pattern`) in the state store (namespace `control`, hash `site-settings`, pattern →
 * settings JSON; `null` once removed, which brings the file's entry back). Every process reads the live ones
 * again every SITE_SETTINGS_REFRESH_MS, so every frontier replica and downloader applies the same settings
 * within that long of a change. A live rule replaces the file's rule of the same pattern whole.
 */
@Injectable()
export class SiteSettingsService {
  static readonly NAMESPACE = 'control';
  static readonly KEY = 'site-settings';
  private readonly store: StateStore;
  private readonly fileRules: readonly SiteRule[];
  private readonly refreshMs: number;
  private live: SiteRule[] = [];
  private readAt = Number.NEGATIVE_INFINITY;
  private reading: Promise<void> | undefined;
  private readonly resolved = new Map<string, ResolvedSite>();

  constructor(@Inject(STATE_STORE) state: StateStore, @Inject(CRAWLER_CONFIG) config: CrawlerConfig) {
    this.store = state.namespace(SiteSettingsService.NAMESPACE);
    this.fileRules = config.siteRules ?? [];
    this.refreshMs = config.sites.refreshMs;
  }

  /** The settings of a host (hostname[:port]), each field from the most specific pattern that sets it. */
  async forHost(host: string): Promise<ResolvedSite> {
    await this.fresh();
    let site = this.resolved.get(host);
    if (!site) {
      site = resolveSiteSettings([...this.fileRules, ...this.live.map((rule) => this.withFileOnly(rule))], host);
      if (this.resolved.size >= RESOLVED_KEPT) this.resolved.clear();
      this.resolved.set(host, site);
    }
    return site;
  }

  /**
   * Adds a page's body bytes to its host's count for the site's `maxBytes` (hash `site-bytes`, host → bytes, in
   * the same namespace); answers the host's count after it, in one atomic step.
   */
  spendBytes(host: string, bytes: number): Promise<number> {
    return this.store.hashIncr('site-bytes', host, bytes);
  }

  /** Whether any site has settings at all: a crawl without any skips every lookup. */
  async any(): Promise<boolean> {
    await this.fresh();
    return this.fileRules.length + this.live.length > 0;
  }

  /** Sets a pattern's live settings (checked: throws an Error naming the field); answers the rule as stored. */
  async set(pattern: string, settings: unknown): Promise<SiteRule> {
    const rule = liveSiteRule(pattern, settings);
    await this.store.hashSet(SiteSettingsService.KEY, rule.pattern.text, JSON.stringify(rule.settings));
    this.readAt = Number.NEGATIVE_INFINITY;
    return rule;
  }

  /** Removes a pattern's live settings (the file's, if any, apply again); answers whether it had any. */
  async remove(pattern: string): Promise<boolean> {
    const text = siteRule(pattern, {}).pattern.text;
    const had = await this.store.hashGet(SiteSettingsService.KEY, text);
    await this.store.hashSet(SiteSettingsService.KEY, text, 'null');
    this.readAt = Number.NEGATIVE_INFINITY;
    return had !== null && had !== 'null';
  }

  async list(): Promise<SiteRulesListing> {
    this.readAt = Number.NEGATIVE_INFINITY;
    await this.fresh();
    return {
      file: this.fileRules.map((r) => ({ pattern: r.pattern.text, settings: r.settings, ...(r.at ? { at: r.at } : {}) })),
      live: this.live.map((r) => ({ pattern: r.pattern.text, settings: r.settings })),
    };
  }

  /**
   * A live rule with the file's `proxy` and `tls` of its pattern: a live change replaces the rest of the entry, never
   * those (the downloader takes them from the file alone), so what a host is said to get is what it gets.
   */
  private withFileOnly(rule: SiteRule): SiteRule {
    const file = this.fileRules.find((r) => r.pattern.text === rule.pattern.text);
    const kept = Object.entries(file?.settings ?? {}).filter(([key]) => FILE_ONLY.includes(key));
    return kept.length ? { ...rule, settings: { ...rule.settings, ...Object.fromEntries(kept) } } : rule;
  }

  private async fresh(): Promise<void> {
    if (performance.now() - this.readAt < this.refreshMs) return;
    this.reading ??= this.readLive().finally(() => (this.reading = undefined));
    await this.reading;
  }

  private async readLive(): Promise<void> {
    const all = await this.store.hashGetAll(SiteSettingsService.KEY);
    const live: SiteRule[] = [];
    for (const [pattern, json] of Object.entries(all).sort(([a], [b]) => (a < b ? -1 : 1))) {
      if (json === 'null') continue;
      try {
        live.push(liveSiteRule(pattern, JSON.parse(json)));
      } catch {
        // Written by hand or by a newer release: a rule this process cannot read is no rule, and the control plane lists it no more.
      }
    }
    this.live = live;
    this.resolved.clear();
    this.readAt = performance.now();
  }
}

/** The site settings alone, for the services that apply them without the rest of the crawl state (the downloader). */
@Module({ providers: [SiteSettingsService], exports: [SiteSettingsService] })
export class SiteSettingsModule {}
