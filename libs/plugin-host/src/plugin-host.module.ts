import { Module } from '@nestjs/common';
import { PluginRegistry } from './plugin-registry.service';

/**
 * The plugin registry, for the core services that hand work to plugins and for the plugin host that
 * registers one. Needs the RuntimeModule loaded beside it (state store, configuration, logger).
 */
@Module({ providers: [PluginRegistry], exports: [PluginRegistry] })
export class PluginHostModule {}
