import { Inject, Injectable, Module, OnApplicationShutdown } from '@nestjs/common';
import { LOGGER, Logger } from '@crawler/logging';
import { CompletionProbe } from './completion-probe.service';
import { CrawlActivity } from './crawl-activity.service';
import { CrawlClock } from './crawl-clock.service';
import { FailedUrls } from './failed-urls.service';
import { HostsAside } from './hosts-aside.service';
import { HubLinks } from './hub-links.service';
import { PauseSwitch } from './pause-switch.service';
import { PolitenessFloor } from './politeness-floor.service';
import { SiteSettingsModule } from './site-settings.service';
import { UnreachedHostsRegistry } from './unreached-hosts.service';

/**
 * Writes the recent activity still held in memory. This module is not global, so Nest shuts it down before
 * the RuntimeModule: after the queues have stopped (no outcome comes in any more) and before the state
 * store closes.
 */
@Injectable()
class CrawlStateLifecycle implements OnApplicationShutdown {
  constructor(
    private readonly activity: CrawlActivity,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  async onApplicationShutdown() {
    await this.activity.close().catch((err) => this.logger.warn({ event: 'activity-lost', err }, 'the last recent activity could not be saved'));
  }
}

const RECORDS = [CrawlActivity, HostsAside, UnreachedHostsRegistry, FailedUrls, PauseSwitch, PolitenessFloor, CompletionProbe, HubLinks, CrawlClock];

/**
 * The crawl-wide records kept in the state store, for the processes that write or read them (the frontier,
 * the control plane, the embedded run, and the stages that feed one of them). Needs the RuntimeModule loaded
 * beside it: every record sits on its state store.
 */
@Module({
  imports: [SiteSettingsModule],
  providers: [...RECORDS, CrawlStateLifecycle],
  exports: [...RECORDS, SiteSettingsModule],
})
export class CrawlStateModule {}
