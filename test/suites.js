/**
 * How the tests split, for `npm run test:unit` and `npm run test:e2e` (`npm test` runs them all).
 * test/architecture/test-suites.test.ts keeps NEEDS_INFRASTRUCTURE true: a spec file that reads a Redis,
 * PostgreSQL or S3 URL, starts an S3 server, runs a driver contract suite or launches Chromium must be listed,
 * and a listed file must still do one of these.
 */

/** The end-to-end directories: whole crawls, clusters and deploy files, run from dist/. */
const E2E_DIRS = ['test/e2e', 'test/deploy'];

/** The images and the Compose stack on a Docker engine: `npm run test:deploy` alone runs them, not `npm test`. */
const DOCKER_DIRS = ['test/containers'];

/** The other spec files that need Redis, a Redis Cluster, PostgreSQL, S3 or Chromium. */
const NEEDS_INFRASTRUCTURE = [
  'libs/content-seen/src/content-seen.service.spec.ts',
  'libs/content-store/src/body-staging.spec.ts',
  'libs/content-store/src/content-store.spec.ts',
  'libs/content-store/src/page-store.spec.ts',
  'libs/control-plane/src/operator-audit.spec.ts',
  'libs/control-plane/src/sites.controller.spec.ts',
  'libs/downloader/src/downloader.processor.spec.ts',
  'libs/frontier/src/frontier-dispatcher.departure.spec.ts',
  'libs/frontier/src/frontier-dispatcher.time-limit.spec.ts',
  'libs/frontier-store/src/frontier-store.spec.ts',
  'libs/hash-ring/src/downloader-membership.spec.ts',
  'libs/plugin-render/src/render.handler.spec.ts',
  'libs/plugin-render/src/renderer.spec.ts',
  'libs/plugin-render/src/subrequest-gate.spec.ts',
  'libs/queue/src/bullmq-cluster-keys.spec.ts',
  'libs/queue/src/bullmq-failover.spec.ts',
  'libs/queue/src/queue-transport.spec.ts',
  'libs/records/src/batching-records.spec.ts',
  'libs/records/src/records-faults.spec.ts',
  'libs/records/src/records-store.spec.ts',
  'libs/redis/src/redis-probe.spec.ts',
  'libs/redis/src/reply-loss.spec.ts',
  'libs/redis/src/redirect-refresh.spec.ts',
  'libs/runtime/src/crawl-stats.service.spec.ts',
  'libs/runtime/src/drivers.factory.spec.ts',
  'libs/simhash/src/simhash-index.spec.ts',
  'libs/state/src/partitioned-hash.spec.ts',
  'libs/state/src/state-store.spec.ts',
  'libs/url-filter/src/url-filter.service.spec.ts',
  'libs/url-seen/src/url-seen.replay.spec.ts',
  'libs/url-seen/src/url-seen.service.spec.ts',
  'libs/warc/src/warc-writer.spec.ts',
  'test/bench/postgres-meter.test.ts',
  'test/bench/redis-meter.test.ts',
  'test/dns/dns-resolver.dns.test.ts',
  'test/plugins/focus-prioritizer.test.ts',
];

module.exports = { E2E_DIRS, DOCKER_DIRS, NEEDS_INFRASTRUCTURE };
