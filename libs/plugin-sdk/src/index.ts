export * from './plugin-definition';
export * from './plugin-config';
export * from './plugin-context';
export * from './plugin.tokens';
export * from './plugin-host.service';
export * from './plugin.module';
export * from './plugin-bootstrap';
export * from './plugin-loader';
export * from './plugin-prioritizer';
// What a plugin needs of the contracts, re-exported so a plugin's handler can import its payload types here.
export type { CrawlUrl, PluginFetched, PluginManifest, PluginPage, PluginEvent, Prioritizer } from '@crawler/contracts';
// A plugin matching URL paths the way the core matches its claims (`urlPatterns`) uses the same globs.
export { globToRegExp } from '@crawler/plugin-host';
