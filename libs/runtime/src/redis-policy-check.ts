import { probeRedis, RedisSettingError } from '@crawler/redis';
import { EvictionPolicyError, findEvictingMaster } from '@crawler/state';

/**
 * How long a starting process waits for Redis to answer its eviction-policy check before it starts anyway
 * (a process must come up, and say it is not ready, while Redis is down); the check then finishes in the
 * background and still stops the process if the policy is wrong.
 */
export const REDIS_POLICY_CHECK_WAIT_MS = 5000;

/**
 * Refuses a Redis that evicts keys (on a cluster, any master that does): `refuse` is called with the error
 * naming the setting (the caller exits). Resolves once the policy is known to be `noeviction`, or after
 * `waitMs` if Redis does not answer.
 */
export async function checkRedisEvictionPolicy(url: string, refuse: (error: EvictionPolicyError) => void, waitMs = REDIS_POLICY_CHECK_WAIT_MS): Promise<void> {
  const check = findEvictingMaster(url).then(
    (error) => {
      if (error) refuse(error);
    },
    // A Redis that does not report its policy (a proxy, an emulation) is not refused on a guess.
    () => undefined,
  );
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([check, new Promise<void>((resolve) => (timer = setTimeout(resolve, waitMs).unref()))]);
  clearTimeout(timer);
}

/**
 * The checks a process makes of REDIS_URL before it starts: that something answers within `startupWaitMs`
 * (REDIS_STARTUP_WAIT_MS), that it is the kind the URL says (a node or a cluster), and that it never evicts.
 * `refuse` is called with the error that names the setting (the caller exits); an outage after start is
 * ridden through instead.
 */
export async function checkRedis(url: string, startupWaitMs: number, refuse: (error: RedisSettingError | EvictionPolicyError) => void): Promise<void> {
  try {
    await probeRedis(url, startupWaitMs);
  } catch (error) {
    if (!(error instanceof RedisSettingError)) throw error;
    refuse(error);
    return;
  }
  await checkRedisEvictionPolicy(url, refuse);
}
