import { Module } from '@nestjs/common';
import { CrawlStateModule } from '@crawler/crawl-state';
import { APP_GUARD } from '@nestjs/core';
import { ControlPlaneAuthGuard } from './control-plane-auth.guard';
import { CrawlControlService } from './crawl-control.service';
import { CRAWL_MONITOR_OPTIONS, CrawlMonitor, DEFAULT_MONITOR_OPTIONS } from './crawl-monitor.service';
import { CrawlController } from './crawl.controller';
import { DashboardController } from './dashboard.controller';
import { DeadLetters } from './dead-letters.service';
import { FrontierController } from './frontier.controller';
import { HostOverrides } from './host-overrides.service';
import { LiveStatus } from './live-status.service';
import { OperatorAudit } from './operator-audit.service';
import { SitesController } from './sites.controller';
import { UrlLookupService } from './url-lookup.service';

/** The control plane: seeds, pause/resume, status and history, URL lookup, per-host and per-site controls, dead letters and failed work, the operator audit, the dashboard. */
@Module({
  imports: [CrawlStateModule],
  controllers: [CrawlController, FrontierController, SitesController, DashboardController],
  providers: [
    CrawlControlService,
    { provide: CRAWL_MONITOR_OPTIONS, useValue: DEFAULT_MONITOR_OPTIONS },
    CrawlMonitor,
    LiveStatus,
    UrlLookupService,
    DeadLetters,
    HostOverrides,
    OperatorAudit,
    { provide: APP_GUARD, useClass: ControlPlaneAuthGuard },
  ],
  exports: [CrawlControlService, CrawlMonitor, DeadLetters],
})
export class ControlPlaneModule {}
