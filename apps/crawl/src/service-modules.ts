import { Type } from '@nestjs/common';
import { ConfigError } from '@crawler/config';
import { ContentParserModule } from '@crawler/content-parser';
import { ContentSeenModule } from '@crawler/content-seen';
import { SERVICE_NAMES, ServiceName } from '@crawler/contracts';
import { ControlPlaneModule } from '@crawler/control-plane';
import { DnsResolverModule } from '@crawler/dns-resolver';
import { DownloaderModule } from '@crawler/downloader';
import { FrontierModule } from '@crawler/frontier';
import { UrlExtractorModule } from '@crawler/url-extractor';
import { UrlFilterModule } from '@crawler/url-filter';
import { UrlSeenModule } from '@crawler/url-seen';

/** The module of each service of the service map: a new service does not compile until it is named here. */
const MODULE_OF: Record<ServiceName, Type> = {
  frontier: FrontierModule,
  'dns-resolver': DnsResolverModule,
  downloader: DownloaderModule,
  'content-parser': ContentParserModule,
  'content-seen': ContentSeenModule,
  'url-extractor': UrlExtractorModule,
  'url-filter': UrlFilterModule,
  'url-seen': UrlSeenModule,
  'control-plane': ControlPlaneModule,
};

/** The modules of these services, in the service map's order (the order the embedded crawl has always loaded them in). */
export function serviceModules(names: readonly ServiceName[] = SERVICE_NAMES): Type[] {
  return SERVICE_NAMES.filter((name) => names.includes(name)).map((name) => MODULE_OF[name]);
}

/**
 * The services a `SERVICES` list names (comma-separated, e.g. `frontier,url-seen`), in the map's order.
 * An empty list, or a name the map does not hold, is a ConfigError naming the setting.
 */
export function parseServiceList(list: string | undefined): ServiceName[] {
  const names = (list ?? '')
    .split(',')
    .map((name) => name.trim())
    .filter(Boolean);
  const unknown = names.filter((name) => !(SERVICE_NAMES as readonly string[]).includes(name));
  if (unknown.length) throw new ConfigError([`SERVICES: no service ${unknown.map((n) => JSON.stringify(n)).join(', ')} (services: ${SERVICE_NAMES.join(', ')})`]);
  if (!names.length) throw new ConfigError([`SERVICES: name the services to run, comma-separated (services: ${SERVICE_NAMES.join(', ')})`]);
  return SERVICE_NAMES.filter((name) => names.includes(name));
}
