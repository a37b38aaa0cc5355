import { probeRedis, RedisSettingError } from './redis-probe';

const NODE_URL = process.env.REDIS_URL || 'redis://127.0.0.1:6379';
const CLUSTER_URL = process.env.REDIS_CLUSTER_URL || 'redis+cluster://127.0.0.1:7000,127.0.0.1:7001,127.0.0.1:7002';
const node = new URL(NODE_URL);
const firstClusterNode = CLUSTER_URL.replace(/^redis\+cluster:\/\//, '').split(',')[0];

describe('probeRedis: REDIS_URL checked against what answers', () => {
  it('accepts a node URL on a node and a cluster URL on a cluster', async () => {
    await expect(probeRedis(NODE_URL)).resolves.toBeUndefined();
    await expect(probeRedis(CLUSTER_URL)).resolves.toBeUndefined();
  });

  it('refuses a node URL pointed at a cluster node, and says how to write it', async () => {
    const error = await probeRedis(`redis://${firstClusterNode}`).catch((e: Error) => e);
    expect(error).toBeInstanceOf(RedisSettingError);
    expect((error as Error).message).toMatch(
      new RegExp(`^REDIS_URL names one Redis node, but ${firstClusterNode} is a node of a Redis Cluster.*write redis\\+cluster://${firstClusterNode}`),
    );
  });

  it('refuses a cluster URL pointed at a plain node', async () => {
    const error = await probeRedis(`redis+cluster://${node.host}`).catch((e: Error) => e);
    expect((error as Error).message).toMatch(
      new RegExp(`^REDIS_URL is a Redis Cluster URL, but ${node.host} is a single Redis with cluster mode off: write redis://${node.host}`),
    );
  });

  it('tries the next seed when one is down, and names every node when none answers', async () => {
    await expect(probeRedis(`redis+cluster://127.0.0.1:1,${firstClusterNode}`)).resolves.toBeUndefined();
    const started = Date.now();
    const error = await probeRedis('redis+cluster://127.0.0.1:1,127.0.0.1:2', 600).catch((e: Error) => e);
    expect(Date.now() - started).toBeLessThan(5000);
    expect((error as Error).message).toMatch(
      /^REDIS_URL redis\+cluster:\/\/127\.0\.0\.1:1,127\.0\.0\.1:2: no Redis answered within 600 ms: 127\.0\.0\.1:1 \(.*ECONNREFUSED.*\), 127\.0\.0\.1:2 \(/,
    );
  });
});
