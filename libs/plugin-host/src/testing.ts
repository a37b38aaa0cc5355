// For tests only (`@crawler/plugin-host/testing`).
import type { CrawlerConfig } from '@crawler/config';
import type { Logger } from '@crawler/logging';
import { MemoryStateStore } from '@crawler/state';
import { PluginRegistry } from './plugin-registry.service';

/** A registry with no plugin enabled, for services built by hand in specs: it never reads the store or logs. */
export function noPlugins(): PluginRegistry {
  return new PluginRegistry(new MemoryStateStore(), { plugins: { enabled: [], waitMs: 0 } } as unknown as CrawlerConfig, undefined as unknown as Logger);
}
