import { Module } from '@nestjs/common';
import { SiteSettingsModule } from '@crawler/crawl-state';
import { PluginHostModule } from '@crawler/plugin-host';
import { CookieJarService } from './cookie-jar.service';
import { DownloaderMetrics } from './downloader.metrics';
import { DownloaderProcessor } from './downloader.processor';
import { DownloaderService } from './downloader.service';
import { ExchangeArchive } from './exchange-archive.service';
import { RobotsService } from './robots.service';

@Module({
  imports: [PluginHostModule, SiteSettingsModule],
  providers: [RobotsService, CookieJarService, DownloaderMetrics, ExchangeArchive, DownloaderService, DownloaderProcessor],
  exports: [DownloaderService],
})
export class DownloaderModule {}
