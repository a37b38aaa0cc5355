import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '@crawler/config';
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
});
