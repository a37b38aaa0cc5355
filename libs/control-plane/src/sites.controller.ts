import { BadRequestException, Body, Controller, Delete, Get, Inject, Param, Put, Query, Req } from '@nestjs/common';
import { CRAWLER_CONFIG, CrawlerConfig } from '@crawler/config';
import { SiteSettingsService } from '@crawler/crawl-state';
import { SiteSettings, withoutCookieValues } from '@crawler/site-settings';
import { ControlPlaneRoute } from './control-plane-route';
import { AuditedRequest, OperatorAudit } from './operator-audit.service';

/**
 * The per-site settings, live (docs/crawl-config.md): the file's (SITE_SETTINGS_FILE) and the ones set here,
 * which every frontier and downloader applies within SITE_SETTINGS_REFRESH_MS. A pattern set here replaces
 * the file's entry of the same pattern whole; removing it brings the file's back. Changes need the token and
 * go to the operator audit, as the per-host controls do. Cookie values are never shown nor audited (a session
 * token in a listing or a log is a leaked session): each reads `(hidden)`.
 */
@Controller('sites')
@ControlPlaneRoute('data')
export class SitesController {
  constructor(
    private readonly sites: SiteSettingsService,
    private readonly audit: OperatorAudit,
    @Inject(CRAWLER_CONFIG) private readonly config: CrawlerConfig,
  ) {}

  /** GET /sites: every rule, the file's and the live ones; GET /sites?host=<host>: the settings that host gets, and from which patterns. */
  @Get()
  async list(@Query('host') host?: string) {
    if (typeof host === 'string' && host) {
      const site = await this.sites.forHost(host.toLowerCase());
      return { host, ...site, settings: withoutCookieValues(site.settings) };
    }
    const { file, live } = await this.sites.list();
    const hidden = <T extends { settings: SiteSettings }>(rule: T) => ({ ...rule, settings: withoutCookieValues(rule.settings) });
    return { file: file.map(hidden), live: live.map(hidden) };
  }

  @Put(':pattern')
  async set(@Param('pattern') pattern: string, @Body() body: unknown, @Req() request: AuditedRequest) {
    let rule: Awaited<ReturnType<SiteSettingsService['set']>>;
    try {
      this.refuseBelowFloor(body);
      rule = await this.sites.set(pattern, body ?? {});
    } catch (error) {
      if (error instanceof Error && !('status' in error)) throw new BadRequestException(error.message);
      throw error;
    }
    const settings = withoutCookieValues(rule.settings);
    await this.audit.record(request, 'site-settings', { pattern: rule.pattern.text, ...settings });
    return { pattern: rule.pattern.text, settings };
  }

  @Delete(':pattern')
  async remove(@Param('pattern') pattern: string, @Req() request: AuditedRequest) {
    let removed: boolean;
    try {
      removed = await this.sites.remove(pattern);
    } catch (error) {
      throw new BadRequestException((error as Error).message);
    }
    await this.audit.record(request, 'site-settings-removed', { pattern, removed });
    return { pattern, removed };
  }

  /** A site's delay under the crawl-wide minimum is refused as an operator's host override is (HostOverrides). */
  private refuseBelowFloor(body: unknown): void {
    const delay = (body as { minDelayMs?: unknown } | null)?.minDelayMs;
    const { minDelayMs, allowDelayBelowMin } = this.config.frontier;
    if (typeof delay === 'number' && delay < minDelayMs && !allowDelayBelowMin) {
      throw new Error(
        `minDelayMs: ${delay} ms is below the crawl-wide minimum of ${minDelayMs} ms (FRONTIER_MIN_DELAY_MS); a site may only raise the floor unless FRONTIER_ALLOW_DELAY_BELOW_MIN=true`,
      );
    }
  }
}
