import { DnsResolverModule } from '@crawler/dns-resolver';
import { bootstrapService } from '@crawler/runtime';

void bootstrapService('dns-resolver', DnsResolverModule);
