import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { MinioContentStore } from '@crawler/content-store';
import { S3TestServer, startS3TestServer } from '@crawler/content-store/testing';
import { TestWeb } from '../web/test-web';
import { expectedStoredPages, expectPoliteCompleteCrawl } from './crawl-expectations';
import { clearPrefix, REDIS_URL } from '../support/redis-prefix';
import { REDIS_CLUSTER_URL } from '../support/redis-cluster';
import { keysByMaster } from '../support/redis-keys';
import { storedPages } from '../support/stored-pages';
import { runCrawlCli } from '../support/run-crawl-cli';
import { removeTempDirs, tempDir } from '../support/temp-dirs';
import { ASK_ONCE_ENV, ONE_ADDRESS_ENV, ROBOTS_ERROR_TTL_MS, ROBOTS_UNREACHABLE_MAX_MS } from '../support/test-web-cluster';

afterAll(removeTempDirs);

/**
 * `npm run crawl -- … --redis … --s3 …`: the embedded command, with BullMQ on Redis and bodies in S3; on one
 * Redis node and on a Redis Cluster (`--redis redis+cluster://…`).
 */
describe.each([
  ['one Redis node', REDIS_URL],
  ['a Redis Cluster', REDIS_CLUSTER_URL],
])('single process on %s and S3 (npm run crawl -- --redis --s3)', (_, redisUrl) => {
  const prefix = `cli-${randomBytes(4).toString('hex')}`;
  let web: TestWeb;
  let s3: S3TestServer;
  let summary: Record<string, any>;

  beforeAll(async () => {
    web = await TestWeb.start({ hosts: 40, seed: 7 });
    s3 = await startS3TestServer();
    const dir = tempDir('cli-infra-');
    writeFileSync(join(dir, 'hosts'), web.hostsFile());
    const { stdout, code, stderr } = await runCrawlCli(
      [
        ...web.seeds(),
        '--scope',
        'any',
        '--max-depth',
        '1000',
        '--delay',
        '0.1',
        '--hosts-file',
        join(dir, 'hosts'),
        '--allow-private',
        '--redis',
        redisUrl,
        '--s3',
        s3.url,
        '--prefix',
        prefix,
        '--out',
        dir,
        '--json',
      ],
      {
        env: {
          ...process.env,
          ...ONE_ADDRESS_ENV,
          ...ASK_ONCE_ENV,
          S3_BUCKET: prefix,
          DOWNLOADER_ROBOTS_ERROR_TTL_MS: ROBOTS_ERROR_TTL_MS,
          DOWNLOADER_ROBOTS_UNREACHABLE_MAX_MS: ROBOTS_UNREACHABLE_MAX_MS,
        },
        timeoutMs: 110_000,
      },
    );
    expect({ code, stderr }).toMatchObject({ code: 0 });
    summary = JSON.parse(stdout);
  }, 150_000);

  afterAll(async () => {
    await clearPrefix(prefix, redisUrl);
    await s3?.close();
    await web?.close();
  });

  it('crawls the test web completely and politely', () => {
    expect(summary.complete).toBe(true);
    expect(Object.keys(summary.totals).filter((k) => k.startsWith('failed.'))).toEqual([]);
    expectPoliteCompleteCrawl(web, { delayMs: 100 });
  });

  it('keeps its state in Redis under its prefix and its pages in S3', async () => {
    const keys = [...(await keysByMaster(redisUrl, prefix)).values()].flat();
    expect(keys.some((k) => k.startsWith(`${prefix}:url-seen:`))).toBe(true);
    expect(keys.some((k) => k.startsWith(`${prefix}:{frontier-add}:`) || k.startsWith(`${prefix}:stats:`))).toBe(true);
    const store = await MinioContentStore.connect({ url: s3.url, bucket: prefix });
    expect((await storedPages(store)).size).toBe(expectedStoredPages(web));
  });
});
