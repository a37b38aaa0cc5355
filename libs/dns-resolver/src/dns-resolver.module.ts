import { Module } from '@nestjs/common';
import { DnsResolverProcessor } from './dns-resolver.processor';
import { DnsResolverService } from './dns-resolver.service';

@Module({ providers: [DnsResolverService, DnsResolverProcessor], exports: [DnsResolverService] })
export class DnsResolverModule {}
