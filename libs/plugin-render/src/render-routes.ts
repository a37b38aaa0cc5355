import type { CrawlerConfig } from '@crawler/config';

/**
 * Why the render plugin may not run with this crawl's settings, or undefined. Its browser's sub-requests go
 * straight to the sites (SubrequestGate's own connections): with a proxy (DOWNLOADER_PROXY_URL, a site's `proxy`)
 * they would leave by another way than the crawl's, and with a site's `tls` options they would be checked
 * differently. Refused at start rather than done quietly.
 */
export function renderCannotKeepRoutes(crawler: Pick<CrawlerConfig, 'downloader' | 'siteRules'>): string | undefined {
  const sites = (crawler.siteRules ?? []).filter((r) => (r.settings.proxy !== undefined && r.settings.proxy !== 'none') || r.settings.tls);
  const what = [
    ...(crawler.downloader.proxyUrl ? ['DOWNLOADER_PROXY_URL'] : []),
    ...sites.map((r) => `SITE_SETTINGS_FILE sites."${r.pattern.text}".${r.settings.tls ? 'tls' : 'proxy'}`),
  ];
  if (!what.length) return undefined;
  return `PLUGINS: render does not send its browser's requests through proxies or with a site's TLS options yet, and this crawl sets ${what.join(', ')}: drop render from PLUGINS, or those settings`;
}
