import { Module } from '@nestjs/common';
import { DnsResolverMetrics } from './dns-resolver.metrics';
import { DnsResolverProcessor } from './dns-resolver.processor';
import { DnsResolverService } from './dns-resolver.service';

@Module({ providers: [DnsResolverMetrics, DnsResolverService, DnsResolverProcessor], exports: [DnsResolverService] })
export class DnsResolverModule {}
