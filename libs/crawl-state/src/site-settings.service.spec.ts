import { loadConfig } from '@crawler/config';
import { siteRule } from '@crawler/site-settings';
import { MemoryStateStore } from '@crawler/state';
import { SiteSettingsService } from './site-settings.service';

describe('SiteSettingsService', () => {
  const fileRules = [siteRule('*.corp.example', { maxPages: 5, proxy: 'none', tls: { caFile: '/etc/corp-ca.pem' } })];
  const service = () => new SiteSettingsService(new MemoryStateStore(), { ...loadConfig({}), siteRules: fileRules });

  it("refuses proxy and tls live, and a live change of the pattern keeps the file's", async () => {
    const sites = service();
    await expect(sites.set('*.corp.example', { proxy: 'http://elsewhere:3128' })).rejects.toThrow(/^proxy: set in the site settings file only/);
    await sites.set('*.corp.example', { maxPages: 50 });
    expect((await sites.forHost('wiki.corp.example')).settings).toEqual({ maxPages: 50, proxy: 'none', tls: { caFile: '/etc/corp-ca.pem' } });
    expect((await sites.list()).live).toEqual([{ pattern: '*.corp.example', settings: { maxPages: 50 } }]);
  });
});
