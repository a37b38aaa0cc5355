import pino from 'pino';
import { loadConfig } from '@crawler/config';
import { PluginManifest, pluginQueue, SCHEMA_VERSION } from '@crawler/contracts';
import { MemoryStateStore } from '@crawler/state';
import { compilePluginClaims, globToRegExp, PluginRegistry, PluginUnavailableError } from './plugin-registry.service';
import { noPlugins } from './testing';

const manifest = (name: string, claims: Partial<PluginManifest['claims']> = {}, pageHook = false): PluginManifest => ({
  v: SCHEMA_VERSION,
  name,
  claims: { contentTypes: [], extensions: [], urlPatterns: [], ...claims },
  pageHook,
  queue: pluginQueue(name),
});

describe('compilePluginClaims', () => {
  const claims = compilePluginClaims([
    manifest('png', { contentTypes: ['image/png'], extensions: ['png'] }),
    manifest('images', { contentTypes: ['image/*'], extensions: ['png', 'gif'], urlPatterns: ['/avatars/*', '/feeds/**.xml'] }),
    manifest('monitor', {}, true),
  ]);

  it('gives a claim to the first plugin of PLUGINS that makes it', () => {
    expect(claims.forContentType('image/png; charset=binary')?.name).toBe('png');
    expect(claims.forContentType('IMAGE/GIF')?.name).toBe('images');
    expect(claims.forContentType('text/html')).toBeUndefined();
    expect(claims.claimsUrl('http://a.test/x/Logo.PNG')?.name).toBe('png');
    expect(claims.claimsUrl('http://a.test/anim.gif?x=1')?.name).toBe('images');
    expect(claims.claimsUrl('http://a.test/avatars/7')?.name).toBe('images');
    expect(claims.claimsUrl('http://a.test/avatars/7/big')).toBeUndefined();
    expect(claims.claimsUrl('http://a.test/feeds/a/b/c.xml')?.name).toBe('images');
    expect(claims.claimsUrl('not a url')).toBeUndefined();
    expect([...claims.extensions].sort()).toEqual(['gif', 'png']);
    expect(claims.pageHooks.map((m) => m.name)).toEqual(['monitor']);
    expect(claims.fetchesNothing).toBe(false);
  });

  it('claims nothing with no plugin, or only page hooks', () => {
    for (const none of [compilePluginClaims([]), compilePluginClaims([manifest('monitor', {}, true)])]) {
      expect(none.fetchesNothing).toBe(true);
      expect(none.claimsUrl('http://a.test/x.png')).toBeUndefined();
      expect(none.forContentType('image/png')).toBeUndefined();
    }
  });

  it("follows a site's render setting for the pages: false keeps them from the render plugin, true gives them all to it", () => {
    const detecting = compilePluginClaims([manifest('render', { pages: ['/**'] })]);
    expect(detecting.claimsPage('http://a.test/x')?.name).toBe('render');
    expect(detecting.claimsPage('http://a.test/x', false)).toBeUndefined();
    const patterns = compilePluginClaims([manifest('focus', { pages: ['/blog/**'] }), manifest('render', { pages: ['/app/**'] })]);
    expect(patterns.claimsPage('http://a.test/about')).toBeUndefined();
    expect(patterns.claimsPage('http://a.test/about', true)?.name).toBe('render');
    expect(patterns.claimsPage('http://a.test/blog/1', true)?.name).toBe('render');
    expect(patterns.claimsPage('http://a.test/blog/1', false)?.name).toBe('focus');
    expect(patterns.claimsPage('http://a.test/app/1', false)).toBeUndefined();
    // Not rendering at all (detect off, no patterns) still renders a site that asks.
    expect(compilePluginClaims([manifest('render')]).claimsPage('http://a.test/x', true)?.name).toBe('render');
    // No render plugin enabled: nothing to give the page to.
    expect(compilePluginClaims([manifest('focus', { pages: ['/blog/**'] })]).claimsPage('http://a.test/x', true)).toBeUndefined();
  });

  it('reads globs literally but for * and **', () => {
    expect(globToRegExp('/a.b/*.png').test('/a.b/x.png')).toBe(true);
    expect(globToRegExp('/a.b/*.png').test('/axb/x.png')).toBe(false);
    expect(globToRegExp('/a/**').test('/a/b/c')).toBe(true);
  });
});

describe('PluginRegistry', () => {
  const logger = pino({ enabled: false });
  const registry = (state: MemoryStateStore, env: NodeJS.ProcessEnv) => new PluginRegistry(state, loadConfig(env), logger);

  it('reads nothing at all when no plugin is enabled', async () => {
    const state = new MemoryStateStore();
    const spy = jest.spyOn(state, 'namespace');
    const none = registry(state, {});
    const ns = spy.mock.results[0].value;
    const read = jest.spyOn(ns, 'hashGetAll');
    expect((await none.claims()).manifests).toEqual([]);
    expect(read).not.toHaveBeenCalled();
    expect((await noPlugins().claims()).fetchesNothing).toBe(true);
  });

  it('answers with the manifests of the enabled plugins only, in PLUGINS order, shared through the state store', async () => {
    const state = new MemoryStateStore();
    const plugin = registry(state, {});
    await plugin.register(manifest('png', { extensions: ['png'] }));
    await plugin.register(manifest('other', { extensions: ['gif'] }));
    await plugin.register(manifest('monitor', {}, true));
    const core = registry(state, { PLUGINS: 'monitor,png' });
    expect((await core.claims()).manifests.map((m) => m.name)).toEqual(['monitor', 'png']);
    expect((await core.registered()).map((m) => m.name).sort()).toEqual(['monitor', 'other', 'png']);
  });

  it('refuses to register an invalid manifest', async () => {
    await expect(registry(new MemoryStateStore(), {}).register({ ...manifest('png'), queue: 'fetch' })).rejects.toThrow();
  });

  it('waits for a missing plugin, then fails naming it (and tries again on the next call)', async () => {
    const state = new MemoryStateStore();
    const core = registry(state, { PLUGINS: 'png', PLUGINS_WAIT_MS: '150' });
    const error = await core.claims().catch((e) => e);
    expect(error).toBeInstanceOf(PluginUnavailableError);
    expect(error.missing).toEqual(['png']);
    await registry(state, {}).register(manifest('png', { extensions: ['png'] }));
    expect((await core.claims()).extensions).toEqual(new Set(['png']));
  });
});
