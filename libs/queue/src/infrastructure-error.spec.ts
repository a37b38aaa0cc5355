import { infrastructureCause, isRedisOutOfMemory, outageDelay } from './infrastructure-error';

const withCode = (message: string, code: string) => Object.assign(new Error(message), { code });

describe('infrastructureCause', () => {
  it('blames Redis for its connection errors and its passing refusals', () => {
    for (const message of [
      'Connection is closed.',
      'Connection lost before the reply to BITFIELD SET: it may have taken effect, so its answer cannot be trusted',
      "Stream isn't writeable and enableOfflineQueue options is false",
      'Reached the max retries per request limit (which is 20). Refer to "maxRetriesPerRequest" option for details.',
      'LOADING Redis is loading the dataset in memory',
      'CLUSTERDOWN The cluster is down',
      "OOM command not allowed when used memory > 'maxmemory'.",
      'EXECABORT Transaction discarded because of previous errors: OOM command not allowed',
      "ERR Error running script (call to f_ff9c): @user_script:30: @user_script: 30: -OOM command not allowed when used memory > 'maxmemory'.",
    ]) {
      expect({ message, cause: infrastructureCause(new Error(message)) }).toEqual({ message, cause: 'redis' });
    }
  });

  it('blames Redis for a cluster failing over or resharding, unreachable, or whose slot map cannot be read', () => {
    for (const message of [
      'MOVED 5798 127.0.0.1:7004',
      'ASK 5798 127.0.0.1:7004',
      'TRYAGAIN Multiple keys request during rehashing of slot',
      'MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to no',
      'Too many Cluster redirections. Last error: ReplyError: MOVED 5798 127.0.0.1:7004',
      'Failed to refresh slots cache.',
      'None of startup nodes is available',
      "Cluster isn't ready and enableOfflineQueue options is false",
      'Node is disconnected',
    ]) {
      expect({ message, cause: infrastructureCause(new Error(message)) }).toEqual({ message, cause: 'redis' });
    }
  });

  it('blames Redis, not the network, for a node timing out under a cluster client (the error its client gives up with)', () => {
    const timedOut = withCode('connect ETIMEDOUT', 'ETIMEDOUT');
    // What ioredis's Cluster rejects with: ClusterAllFailedError, the last node's error in lastNodeError.
    const refresh = Object.assign(new Error('Failed to refresh slots cache.'), { name: 'ClusterAllFailedError', lastNodeError: timedOut });
    expect(infrastructureCause(refresh)).toBe('redis');
    expect(infrastructureCause(new Error('staging failed', { cause: refresh }))).toBe('redis');
    // Alone, a timeout names no server: an outage all the same.
    expect(infrastructureCause(timedOut)).toBe('network');
  });

  it('does not call a cluster refusal that will never pass an outage', () => {
    expect(infrastructureCause(new Error("CROSSSLOT Keys in request don't hash to the same slot"))).toBeNull();
    expect(infrastructureCause(new Error('ERR Error running script: Script attempted to access a non local key in a cluster node'))).toBeNull();
  });

  it('blames S3 for the content store failing on the network, a 5xx or throttling, not for a refusal', () => {
    const down = new Error('content store: put s3://b/k failed (ECONNREFUSED): connect ECONNREFUSED', { cause: withCode('connect ECONNREFUSED', 'ECONNREFUSED') });
    expect(infrastructureCause(down)).toBe('s3');
    expect(infrastructureCause(new Error('content store: get s3://b/k failed (SlowDown): slow down', { cause: withCode('slow down', 'SlowDown') }))).toBe('s3');
    expect(infrastructureCause(new Error('content store: put s3://b/k failed (InternalError): oops'))).toBe('s3');
    expect(infrastructureCause(new Error('content store: put s3://b/k failed (AccessDenied): no', { cause: withCode('no', 'AccessDenied') }))).toBeNull();
  });

  it('blames PostgreSQL for connection and shutdown SQLSTATEs, and the network for a bare connection error', () => {
    expect(infrastructureCause(withCode('terminating connection due to administrator command', '57P01'))).toBe('postgresql');
    expect(infrastructureCause(withCode('connection failure', '08006'))).toBe('postgresql');
    expect(infrastructureCause(withCode('duplicate key', '23505'))).toBeNull();
    expect(infrastructureCause(withCode('connect ECONNREFUSED 127.0.0.1:5432', 'ECONNREFUSED'))).toBe('network');
    // node-postgres's own errors for a session cut under a statement carry no code, only these words.
    expect(infrastructureCause(new Error('Connection terminated unexpectedly'))).toBe('postgresql');
    expect(infrastructureCause(new Error('Client has encountered a connection error and is not queryable'))).toBe('postgresql');
    // The records store names a refused connection as PostgreSQL's: a connection SQLSTATE, the network error its cause.
    expect(
      infrastructureCause(
        Object.assign(
          new Error('records store: PostgreSQL unavailable: connect ECONNREFUSED 127.0.0.1:5432', {
            cause: withCode('connect ECONNREFUSED 127.0.0.1:5432', 'ECONNREFUSED'),
          }),
          { code: '08001' },
        ),
      ),
    ).toBe('postgresql');
  });

  it('finds the outage anywhere in the cause chain, and calls bugs bugs', () => {
    expect(infrastructureCause(new Error('staging failed', { cause: new Error('Connection is closed.') }))).toBe('redis');
    expect(infrastructureCause(new AggregateError([new Error('x'), withCode('reset', 'ECONNRESET')]))).toBe('network');
    expect(infrastructureCause(new TypeError("Cannot read properties of undefined (reading 'url')"))).toBeNull();
    expect(infrastructureCause('a string')).toBeNull();
    expect(infrastructureCause(undefined)).toBeNull();
  });

  it('sees the OOM behind an EXECABORT in the replies ioredis keeps (previousErrors)', () => {
    const aborted = Object.assign(new Error('EXECABORT Transaction discarded because of previous errors.'), {
      previousErrors: [new Error("OOM command not allowed when used memory > 'maxmemory'.")],
    });
    expect(infrastructureCause(aborted)).toBe('redis');
    expect(isRedisOutOfMemory(aborted)).toBe(true);
    expect(infrastructureCause(new Error('EXECABORT Transaction discarded because of previous errors.'))).toBeNull();
  });

  it('tells an OOM refusal apart from other Redis errors', () => {
    expect(isRedisOutOfMemory(new Error("OOM command not allowed when used memory > 'maxmemory'."))).toBe(true);
    expect(isRedisOutOfMemory(new Error('EXECABORT Transaction discarded because of previous errors.', { cause: new Error('OOM command not allowed') }))).toBe(true);
    expect(isRedisOutOfMemory(new Error('LOADING Redis is loading'))).toBe(false);
  });
});

describe('outageDelay', () => {
  const policy = { backoffMs: 1000, maxBackoffMs: 30_000, maxMs: 600_000 };
  it('doubles from the backoff up to the cap, and gives up after the outage period', () => {
    const now = 1_000_000;
    expect([0, 1, 2, 4, 5, 6, 40].map((retry) => outageDelay(policy, { since: now, cause: 's3', retry }, now))).toEqual([
      1000, 2000, 4000, 16_000, 30_000, 30_000, 30_000,
    ]);
    expect(outageDelay(policy, { since: now - 600_000, cause: 's3', retry: 3 }, now)).toBeNull();
  });
});
