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
  'libs/frontier-store/src/recorded-shards.spec.ts',
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
  'libs/redis/src/testing.spec.ts',
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
  'test/bench/redis-breakdown.test.ts',
  'test/bench/redis-meter.test.ts',
  'test/dns/dns-resolver.dns.test.ts',
  'test/plugins/focus-prioritizer.test.ts',
];

/**
 * `npm test` runs two lanes side by side (test/run-all.js), each one file at a time: these end-to-end files,
 * the longest (crash, fault and scale crawls, whose time goes mostly in waiting on politeness delays and
 * recoveries), and every other file. Together they take about as long as the rest. A new file goes in the
 * other lane unless it is added here.
 */
const LONG_LANE = [
  'test/e2e/scale-reduced.test.ts',
  'test/e2e/service-crash.test.ts',
  'test/e2e/redis-cluster-faults.test.ts',
  'test/e2e/infrastructure-faults.test.ts',
  'test/e2e/distributed-crawl.test.ts',
  'test/e2e/redis-memory.test.ts',
  'test/e2e/frontier-crash.test.ts',
  'test/e2e/per-ip-allowance.test.ts',
  'test/e2e/records-postgres.test.ts',
  'test/e2e/records-outage.test.ts',
  'test/e2e/dashboard.test.ts',
  'test/e2e/crawl-explains.test.ts',
];

module.exports = { E2E_DIRS, DOCKER_DIRS, NEEDS_INFRASTRUCTURE, LONG_LANE };
