import { decodeJob, InvalidMessageError, PIPELINE_QUEUES, PluginManifest, pluginEventsQueue, pluginQueue, QueueName, SCHEMA_VERSION } from './index';

describe('plugin contracts', () => {
  const manifest = { v: SCHEMA_VERSION, name: 'png', claims: { contentTypes: ['image/png'], extensions: ['png'] }, pageHook: false, queue: 'plugin.png' };

  it('names a plugin’s queues plugin.<name> and plugin-events.<name>, and refuses a bad name', () => {
    expect(pluginQueue('png')).toBe('plugin.png');
    expect(pluginEventsQueue('web-monitor')).toBe('plugin-events.web-monitor');
    for (const bad of ['', 'PNG', 'a:b', 'a.b', '9x', 'x'.repeat(33)]) expect(() => pluginQueue(bad)).toThrow(/invalid plugin name/);
  });

  it('validates a manifest: defaults, media ranges, extensions, and the queue it must consume', () => {
    expect(PluginManifest.parse(manifest)).toEqual({ ...manifest, claims: { ...manifest.claims, urlPatterns: [] } });
    expect(PluginManifest.safeParse({ ...manifest, queue: 'plugin.other' }).success).toBe(false);
    expect(PluginManifest.safeParse({ ...manifest, claims: { contentTypes: ['image/png; q=1'] } }).success).toBe(false);
    expect(PluginManifest.safeParse({ ...manifest, claims: { contentTypes: ['image/*'], extensions: ['.png'] } }).success).toBe(false);
    expect(PluginManifest.safeParse({ ...manifest, claims: { urlPatterns: ['no-leading-slash'] } }).success).toBe(false);
    expect(PluginManifest.safeParse({ ...manifest, claims: { maxBytes: 10 } }).success).toBe(false);
  });

  it('carries a claimed response or a new page on a plugin queue, anything else goes to the dead letters', () => {
    const page = {
      v: SCHEMA_VERSION,
      hook: 'page',
      url: 'http://a.test/',
      depth: 0,
      status: 200,
      fetchedAt: '2025-01-01T00:00:00Z',
      contentType: 'text/html',
      charset: 'utf-8',
      noindex: false,
      contentHash: 'a'.repeat(64),
      simhash: 'b'.repeat(16),
      contentKey: 'pages/aa/x.html.gz',
    };
    expect(decodeJob(pluginQueue('monitor'), page)).toEqual(page);
    const fetched = {
      v: SCHEMA_VERSION,
      hook: 'fetched',
      fetchId: 'f',
      url: 'http://a.test/x.png',
      depth: 1,
      status: 200,
      headers: {},
      contentType: 'image/png',
      bodyKey: 'staging/f',
      length: 3,
      truncated: false,
      fetchedAt: 'now',
      source: 'http://a.test/',
    };
    expect(decodeJob(pluginQueue('png'), fetched)).toEqual(fetched);
    expect(() => decodeJob(pluginQueue('png'), { ...fetched, hook: 'other' })).toThrow(InvalidMessageError);
    expect(() => decodeJob(pluginQueue('png'), { ...page, contentKey: undefined })).toThrow(/contentKey/);
  });

  it('counts a plugin’s work as pipeline work, and its events not', () => {
    expect(PIPELINE_QUEUES).toContain(QueueName.Plugin);
    expect(PIPELINE_QUEUES).not.toContain(QueueName.PluginEvents);
    const event = { v: SCHEMA_VERSION, plugin: 'monitor', type: 'alert', at: 'now', url: 'http://a.test/', data: { term: 'x' } };
    expect(decodeJob(pluginEventsQueue('monitor'), event)).toEqual(event);
  });
});
