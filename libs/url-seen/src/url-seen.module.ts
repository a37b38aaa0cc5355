import { Module } from '@nestjs/common';
import { CrawlStateModule } from '@crawler/crawl-state';
import { UrlSeenMetrics } from './url-seen.metrics';
import { UrlSeenProcessor } from './url-seen.processor';
import { UrlSeenService } from './url-seen.service';

@Module({ imports: [CrawlStateModule], providers: [UrlSeenService, UrlSeenProcessor, UrlSeenMetrics], exports: [UrlSeenService] })
export class UrlSeenModule {}
