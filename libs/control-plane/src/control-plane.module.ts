import { Module } from '@nestjs/common';
import { CrawlControlService } from './crawl-control.service';
import { CrawlMonitor } from './crawl-monitor.service';
import { CrawlController } from './crawl.controller';
import { DashboardController } from './dashboard.controller';
import { FrontierController } from './frontier.controller';
import { UrlLookupService } from './url-lookup.service';

/** The control plane: seeds, pause/resume, status and history, URL lookup, per-host controls, the dashboard. */
@Module({
  controllers: [CrawlController, FrontierController, DashboardController],
  providers: [CrawlControlService, CrawlMonitor, UrlLookupService],
  exports: [CrawlControlService, CrawlMonitor],
})
export class ControlPlaneModule {}
