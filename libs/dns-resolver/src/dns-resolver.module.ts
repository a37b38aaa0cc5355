import { Module } from '@nestjs/common';
import { CrawlStateModule } from '@crawler/crawl-state';
import { DnsResolverMetrics } from './dns-resolver.metrics';
import { DnsResolverProcessor } from './dns-resolver.processor';
import { DnsResolverService } from './dns-resolver.service';

@Module({ imports: [CrawlStateModule], providers: [DnsResolverMetrics, DnsResolverService, DnsResolverProcessor], exports: [DnsResolverService] })
export class DnsResolverModule {}
