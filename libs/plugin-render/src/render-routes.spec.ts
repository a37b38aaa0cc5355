import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, loadConfig, siteRenderSetting } from '@crawler/config';
import { renderCannotKeepRoutes } from './render-routes';

describe('renderCannotKeepRoutes', () => {
  const dir = mkdtempSync(join(tmpdir(), 'render-routes-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const withSites = (yaml: string, env: NodeJS.ProcessEnv = {}) => {
    const file = join(dir, `${Math.random().toString(36).slice(2)}.yaml`);
    writeFileSync(file, yaml);
    return loadConfig({ ...env, SITE_SETTINGS_FILE: file });
  };

  it('refuses a crawl whose requests go through a proxy or with TLS options, naming the settings', () => {
    expect(renderCannotKeepRoutes(loadConfig({}))).toBeUndefined();
    expect(renderCannotKeepRoutes(withSites('sites:\n  a.test: {proxy: none, maxPages: 3}\n'))).toBeUndefined();
    const refusal = renderCannotKeepRoutes(
      withSites('sites:\n  "*.corp.test": {tls: {insecureSkipVerify: true}}\n', { DOWNLOADER_PROXY_URL: 'http://u:s3cret@proxy:3128' }),
    );
    expect(refusal).toMatch(/^PLUGINS: render does not send .* this crawl sets DOWNLOADER_PROXY_URL, SITE_SETTINGS_FILE sites."\*\.corp\.test"\.tls:/);
    expect(refusal).not.toContain('s3cret');
  });

  it("reads a site's render setting from the file, and refuses render: true without the render plugin", () => {
    const config = withSites('sites:\n  "*.app.test": {render: true}\n  static.app.test: {render: false}\n', { PLUGINS: 'render' });
    expect(siteRenderSetting(config, 'www.app.test')).toBe(true);
    expect(siteRenderSetting(config, 'static.app.test')).toBe(false);
    expect(siteRenderSetting(config, 'other.test')).toBeUndefined();
    expect(siteRenderSetting(loadConfig({}), 'www.app.test')).toBeUndefined();
    expect(() => withSites('sites:\n  a.test: {render: true}\n')).toThrow(ConfigError);
    expect(() => withSites('sites:\n  a.test: {render: true}\n')).toThrow(/sites."a\.test"\.render: true needs the render plugin: add render to PLUGINS/);
    expect(siteRenderSetting(withSites('sites:\n  a.test: {render: false}\n'), 'a.test')).toBe(false);
  });
});
