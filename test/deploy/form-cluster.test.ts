import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { parseRedisUrl } from '@crawler/redis';
import { REDIS_CLUSTER_URL } from '../support/redis-cluster';
import { ROOT } from './deploy-support';

/**
 * k8s/redis-cluster/form-cluster.sh, the script that forms the Redis Cluster of both deployments (the Compose
 * one-shot redis-cluster-init and the Kubernetes Job), run for real against the local test cluster: it must
 * leave a formed cluster alone (it runs again on every `up`), and give up on a node that never answers. Only
 * read-only commands reach the shared cluster.
 */

const SCRIPT = join(ROOT, 'k8s/redis-cluster/form-cluster.sh');

function formCluster(nodes: string[], waitSeconds = 10) {
  return spawnSync('sh', [SCRIPT], {
    env: { PATH: process.env.PATH, REDIS_CLUSTER_NODES: nodes.join(' '), REDIS_CLUSTER_WAIT_SECONDS: String(waitSeconds) },
    encoding: 'utf8',
    timeout: 60_000,
  });
}

const hasRedisCli = spawnSync('redis-cli', ['--version']).status === 0;
const withRedisCli = hasRedisCli ? it : it.skip;

describe('form-cluster.sh', () => {
  const seeds = parseRedisUrl(REDIS_CLUSTER_URL).nodes.map(({ host, port }) => `${host}:${port}`);

  withRedisCli('leaves a cluster that is already formed as it is, and reports it ok', () => {
    const run = formCluster(seeds);
    expect(run.stderr).toBe('');
    expect(run.stdout).toBe('redis-cluster: already formed, nothing to do\nredis-cluster: ok\n');
    expect(run.status).toBe(0);
  });

  withRedisCli('gives up, failing, when a node never answers', () => {
    const run = formCluster([seeds[0], '127.0.0.1:1'], 2);
    expect(run.stderr).toMatch(/gave up after 2s waiting for 127\.0\.0\.1:1 to answer/);
    expect(run.status).not.toBe(0);
  });

  it('refuses to run without the list of nodes', () => {
    const run = spawnSync('sh', [SCRIPT], { env: { PATH: process.env.PATH }, encoding: 'utf8' });
    expect(run.stderr).toMatch(/REDIS_CLUSTER_NODES/);
    expect(run.status).not.toBe(0);
  });
});
