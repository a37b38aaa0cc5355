import { Module } from '@nestjs/common';
import { ConfigError } from '@crawler/config';
import { checkFetchRoutes } from '@crawler/downloader';
import { bootstrapService } from '@crawler/runtime';
import { checkUrlSeenRoom } from '@crawler/url-seen';
import { parseServiceList, serviceModules } from './service-modules';

/**
 * Runs the services SERVICES names (`SERVICES=frontier,url-seen`) in one process, so that light stages can
 * share one; each still runs as it does alone, on the shared queues. It is named after them
 * (`frontier+url-seen`) in its logs, metrics and health answers.
 */
function main(): void {
  let names;
  try {
    names = parseServiceList(process.env.SERVICES);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    process.stderr.write(`services: ${error.message}\n`);
    process.exit(2);
  }
  @Module({ imports: serviceModules(names) })
  class SelectedServicesModule {}
  void bootstrapService(names.join('+'), SelectedServicesModule, {
    controlApi: names.includes('control-plane'),
    startChecks: [...(names.includes('url-seen') ? [checkUrlSeenRoom] : []), ...(names.includes('downloader') ? [checkFetchRoutes] : [])],
  });
}

main();
