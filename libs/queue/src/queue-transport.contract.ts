import { DeadLetter, fetchQueue, JobOf, QueueName } from '@crawler/contracts';
import type { QueueCounts, QueueTransport } from './queue-transport';

/**
 * The behaviour every QueueTransport driver must share, registered as jest tests. `make` builds a fresh
 * transport per test (with a small retry backoff, so retries take milliseconds, and an outage period of
 * a second or two); `cleanup` runs after it is closed.
 */
export function queueTransportContract(name: string, make: () => Promise<QueueTransport>, cleanup?: () => Promise<void>): void {
  describe(`QueueTransport contract: ${name}`, () => {
    let transport: QueueTransport;

    beforeEach(async () => {
      transport = await make();
    });

    afterEach(async () => {
      await transport.close();
      await cleanup?.();
    });

    const token = (host: string): JobOf<QueueName.FrontierAdd> => ({ v: 1, urls: [{ url: `http://${host}/`, depth: 0, source: 'seed', hops: 0 }] });
    const batch = (url: string): JobOf<QueueName.FilterUrls> => ({
      v: 1,
      urls: [{ url, depth: 0, source: 'seed', hops: 0 }],
    });

    /** Collects the hosts delivered on FrontierAdd. */
    async function collectHosts(concurrency = 1): Promise<string[]> {
      const hosts: string[] = [];
      await transport.consume(QueueName.FrontierAdd, async (p) => void hosts.push(new URL(p.urls[0].url).hostname), { concurrency });
      return hosts;
    }

    it('delivers in FIFO order and round-trips payloads', async () => {
      const sent = [batch('http://a.test/'), batch('http://b.test/'), batch('http://c.test/')];
      for (const payload of sent) await transport.add(QueueName.FilterUrls, payload);
      const received: unknown[] = [];
      await transport.consume(QueueName.FilterUrls, async (p) => void received.push(p));
      await waitFor(() => received.length === 3);
      expect(received).toEqual(sent);
    });

    it('adds in bulk, in order, messages with a job id of their own among the others', async () => {
      const names = ['a', 'b', 'c', 'd', 'e', 'f', 'g'].map((n) => `${n}.test`);
      await transport.addBulk(
        QueueName.FrontierAdd,
        names.map((host, i) => ({ payload: token(host), ...(i % 3 === 1 ? { options: { jobId: `job-${host}` } } : {}) })),
      );
      const hosts = await collectHosts();
      await waitFor(() => hosts.length === names.length);
      expect(hosts).toEqual(names);
    });

    it('never shares payload objects between producer and consumer', async () => {
      const payload = token('a.test');
      await transport.add(QueueName.FrontierAdd, payload);
      payload.urls[0].url = 'http://mutated.test/';
      const hosts = await collectHosts();
      await waitFor(() => hosts.length === 1);
      expect(hosts).toEqual(['a.test']);
    });

    it('deduplicates by job id while the job exists, and only then', async () => {
      await transport.add(QueueName.FrontierAdd, token('a.test'), { jobId: 'host-a' });
      await transport.add(QueueName.FrontierAdd, token('a.test'), { jobId: 'host-a' });
      await transport.addBulk(QueueName.FrontierAdd, [{ payload: token('a.test'), options: { jobId: 'host-a' } }]);
      expect((await transport.counts(QueueName.FrontierAdd)).waiting).toBe(1);

      const hosts = await collectHosts();
      await waitFor(() => hosts.length === 1);
      await waitForCounts(transport, QueueName.FrontierAdd, { waiting: 0, active: 0, delayed: 0 });
      await transport.add(QueueName.FrontierAdd, token('a.test'), { jobId: 'host-a' });
      await waitFor(() => hosts.length === 2);
    });

    it('rejects job ids BullMQ cannot store', async () => {
      const add = (jobId: string) => transport.add(QueueName.FrontierAdd, token('a.test'), { jobId });
      await expect(add('a:b:c')).rejects.toThrow(/:/);
      await expect(add('42')).rejects.toThrow(/integer/);
    });

    it('holds a delayed job until its delay has passed', async () => {
      const start = Date.now();
      await transport.add(QueueName.FrontierAdd, token('a.test'), { delayMs: 400 });
      // When the job arrived, taken as it arrives: a loaded machine may stretch the waits below past the delay.
      const arrivedAfter: number[] = [];
      await transport.consume(QueueName.FrontierAdd, async () => void arrivedAfter.push(Date.now() - start));
      await sleep(150);
      const counts = await transport.counts(QueueName.FrontierAdd);
      if (Date.now() - start < 390) expect(counts).toMatchObject({ waiting: 0, delayed: 1 });
      await waitFor(() => arrivedAfter.length === 1);
      expect(arrivedAfter[0]).toBeGreaterThanOrEqual(390);
    });

    it('counts jobs exactly before, during and after processing', async () => {
      const q = QueueName.FrontierAdd;
      expect(await transport.counts(q)).toEqual({ waiting: 0, active: 0, delayed: 0, failed: 0 });
      await transport.add(q, token('a.test'));
      await transport.add(q, token('b.test'));
      await transport.add(q, token('c.test'), { delayMs: 600 });
      expect(await transport.counts(q)).toEqual({ waiting: 2, active: 0, delayed: 1, failed: 0 });

      const gate = deferred();
      let handled = 0;
      await transport.consume(q, async () => {
        await gate.promise;
        handled++;
      });
      await waitForCounts(transport, q, { active: 1 });
      expect(await transport.counts(q)).toEqual({ waiting: 1, active: 1, delayed: 1, failed: 0 });

      gate.resolve();
      await waitFor(() => handled === 3);
      await waitForCounts(transport, q, { waiting: 0, active: 0, delayed: 0, failed: 0 });
    });

    it('counts messages, not jobs: messages sent together, retried, failed for good and replayed never make it drift', async () => {
      const q = QueueName.FrontierAdd;
      const hosts = Array.from({ length: 20 }, (_, i) => `h${i}.test`);
      await Promise.all(hosts.map((host) => transport.add(q, token(host))));
      await transport.add(q, token('later.test'), { delayMs: 60_000 });
      expect(await transport.messages(q)).toEqual({ waiting: 20, active: 0, delayed: 1, failed: 0 });

      let broken = true;
      const calls = new Map<string, number>();
      const gate = deferred();
      await transport.consume(
        q,
        async (p) => {
          const host = new URL(p.urls[0].url).hostname;
          calls.set(host, (calls.get(host) ?? 0) + 1);
          await gate.promise;
          if (host === 'h3.test' && calls.get(host) === 1) throw new Error('transient');
          if (broken && (host === 'h5.test' || host === 'h9.test')) throw new Error('permanent');
        },
        { concurrency: 4 },
      );
      await waitFor(() => calls.size > 0);
      // Taken messages are active (BullMQ: the whole envelope), the rest waiting: none lost, none twice.
      const during = await transport.messages(q);
      expect(during.waiting + during.active).toBe(20);
      expect(during.active).toBeGreaterThan(0);

      gate.resolve();
      await waitForMessages(transport, q, { waiting: 0, active: 0, delayed: 1, failed: 2 });
      expect(calls.get('h3.test')).toBe(2);
      broken = false;
      expect(await transport.replayFailed(q)).toBe(2);
      await waitForMessages(transport, q, { waiting: 0, active: 0, delayed: 1, failed: 0 });
    });

    it('runs at most `concurrency` handlers at once', async () => {
      let running = 0;
      let peak = 0;
      let done = 0;
      await transport.addBulk(
        QueueName.FrontierAdd,
        ['a', 'b', 'c', 'd', 'e', 'f'].map((h) => ({ payload: token(`${h}.test`) })),
      );
      await transport.consume(
        QueueName.FrontierAdd,
        async () => {
          peak = Math.max(peak, ++running);
          await sleep(40);
          running--;
          done++;
        },
        { concurrency: 2 },
      );
      await waitFor(() => done === 6);
      expect(peak).toBe(2);
    });

    it('dead-letters malformed messages with the reason and never calls the handler', async () => {
      const handler = jest.fn(async () => undefined);
      const letters: DeadLetter[] = [];
      await transport.add(QueueName.FrontierAdd, { v: 1, urls: 42 } as any);
      await transport.add(QueueName.FrontierAdd, { v: 2, urls: [] } as any);
      await transport.consume(QueueName.FrontierAdd, handler);
      await transport.consume(QueueName.DeadLetter, async (letter) => void letters.push(letter));
      await waitFor(() => letters.length === 2);

      expect(handler).not.toHaveBeenCalled();
      expect(letters.map((l) => l.queue)).toEqual([QueueName.FrontierAdd, QueueName.FrontierAdd]);
      expect(letters[0].reason).toMatch(/^urls: /);
      expect(letters[0].payload).toEqual({ v: 1, urls: 42 });
      expect(letters[1].reason).toMatch(/^v: /);
      expect(Date.parse(letters[1].at)).not.toBeNaN();
      await waitForCounts(transport, QueueName.FrontierAdd, { waiting: 0, active: 0, delayed: 0, failed: 0 });
    });

    it('dead-letters any poison (not an object, wrong shape, a sharded queue) and goes on with the good jobs', async () => {
      const shard = fetchQueue('dl-test');
      const handled: string[] = [];
      const letters: DeadLetter[] = [];
      for (const poison of [null, 'not json at all', [1, 2], { v: '1', urls: [] }, { v: 1, urls: [{ url: '', depth: -1, source: 'nowhere' }] }]) {
        await transport.add(QueueName.FrontierAdd, poison as any);
      }
      await transport.add(QueueName.FrontierAdd, token('good.test'));
      await transport.add(shard, { v: 1, url: 'http://a.test/', depth: 0, source: 'seed', hops: 0, leaseId: 'l1', host: 'a.test' } as any);
      await transport.consume(QueueName.FrontierAdd, async (p) => void handled.push(new URL(p.urls[0].url).hostname));
      await transport.consume(shard, async () => void handled.push('fetched'));
      await transport.consume(QueueName.DeadLetter, async (letter) => void letters.push(letter));
      await waitFor(() => letters.length === 6 && handled.length === 1);

      expect(handled).toEqual(['good.test']);
      const byQueue = letters.filter((l) => l.queue === QueueName.FrontierAdd);
      expect(byQueue.map((l) => l.payload)).toEqual([null, 'not json at all', [1, 2], { v: '1', urls: [] }, { v: 1, urls: [{ url: '', depth: -1, source: 'nowhere' }] }]);
      expect(byQueue[0].reason).toMatch(/^\(root\): /);
      expect(byQueue[3].reason).toMatch(/^v: /);
      // Each offending field is named with its path.
      expect(byQueue[4].reason).toMatch(/urls\.0\.url: .*urls\.0\.depth: .*urls\.0\.source: /);
      // A message on a downloader's shard is dead-lettered under the shard's name, missing fields named.
      const sharded = letters.find((l) => l.queue === shard)!;
      expect(sharded.reason).toMatch(/fetchId/);
      await waitForCounts(transport, QueueName.FrontierAdd, { waiting: 0, active: 0, delayed: 0, failed: 0 });
      await waitForCounts(transport, shard, { waiting: 0, active: 0, delayed: 0, failed: 0 });
    });

    it('never dead-letters a malformed dead letter again: it fails once, without retries', async () => {
      let calls = 0;
      await transport.add(QueueName.DeadLetter, { v: 1, queue: 'x' } as any);
      await transport.consume(QueueName.DeadLetter, async () => void calls++);
      await waitForCounts(transport, QueueName.DeadLetter, { waiting: 0, active: 0, delayed: 0, failed: 1 });
      await sleep(100);
      expect(await transport.counts(QueueName.DeadLetter)).toEqual({ waiting: 0, active: 0, delayed: 0, failed: 1 });
      expect(calls).toBe(0);
    });

    it('retries a handler that throws, then succeeds', async () => {
      let calls = 0;
      await transport.add(QueueName.FrontierAdd, token('a.test'));
      await transport.consume(QueueName.FrontierAdd, async () => {
        if (++calls === 1) throw new Error('transient');
      });
      await waitFor(() => calls === 2);
      await waitForCounts(transport, QueueName.FrontierAdd, { waiting: 0, active: 0, delayed: 0, failed: 0 });
    });

    it('counts a job failed once its attempts are used up', async () => {
      let calls = 0;
      await transport.add(QueueName.FrontierAdd, token('a.test'));
      await transport.consume(QueueName.FrontierAdd, async () => {
        calls++;
        throw new Error('permanent');
      });
      await waitForCounts(transport, QueueName.FrontierAdd, { waiting: 0, active: 0, delayed: 0, failed: 1 });
      expect(calls).toBeGreaterThanOrEqual(2);
    });

    it('keeps the messages whose attempts ran out, with why, and sends them round again on replay', async () => {
      let broken = true;
      const handled: string[] = [];
      await transport.add(QueueName.FrontierAdd, token('a.test'));
      await transport.add(QueueName.FrontierAdd, token('b.test'));
      await transport.consume(QueueName.FrontierAdd, async (p) => {
        const host = new URL(p.urls[0].url).hostname;
        if (broken && host === 'b.test') throw new Error(`${host} is broken`);
        handled.push(host);
      });
      await waitForCounts(transport, QueueName.FrontierAdd, { waiting: 0, active: 0, delayed: 0, failed: 1 });
      const failed = await transport.failed(QueueName.FrontierAdd);
      expect(failed).toEqual([{ payload: token('b.test'), reason: 'b.test is broken', failedAt: expect.any(String) }]);
      expect(Date.parse(failed[0].failedAt)).not.toBeNaN();
      expect(handled).toEqual(['a.test']);

      broken = false;
      expect(await transport.replayFailed(QueueName.FrontierAdd)).toBe(1);
      await waitFor(() => handled.length === 2);
      expect(handled).toEqual(['a.test', 'b.test']);
      await waitForCounts(transport, QueueName.FrontierAdd, { waiting: 0, active: 0, delayed: 0, failed: 0 });
      expect(await transport.failed(QueueName.FrontierAdd)).toEqual([]);
      expect(await transport.replayFailed(QueueName.FrontierAdd)).toBe(0);
    });

    it('keeps every message whose attempts ran out, however many, until it is replayed: none dropped', async () => {
      // More failed jobs than a capped failed set keeps (BullMQ's removeOnFail count was 1,000): each message
      // its own job (a job id of its own), each failing for good.
      const failing = 1001;
      await transport.addBulk(
        QueueName.FrontierAdd,
        Array.from({ length: failing }, (_, i) => ({ payload: token(`h${i}.test`), options: { jobId: `failing-${i}` } })),
      );
      let broken = true;
      const handled = new Set<string>();
      await transport.consume(
        QueueName.FrontierAdd,
        async (p) => {
          if (broken) throw new Error('broken');
          handled.add(new URL(p.urls[0].url).hostname);
        },
        { concurrency: 64 },
      );
      await waitFor(async () => {
        const c = await transport.counts(QueueName.FrontierAdd);
        return c.waiting + c.active + c.delayed === 0 && c.failed > 0;
      }, 60_000);
      expect((await transport.counts(QueueName.FrontierAdd)).failed).toBe(failing);
      broken = false;
      expect(await transport.replayFailed(QueueName.FrontierAdd)).toBe(failing);
      await waitFor(() => handled.size === failing, 60_000);
    }, 120_000);

    it('waits out an outage: a message failing on S3 connection errors is retried past its attempts, reported, then handled', async () => {
      let calls = 0;
      let outageSeen: unknown = null;
      await transport.add(QueueName.FrontierAdd, token('a.test'));
      await transport.consume(QueueName.FrontierAdd, async () => {
        // Far more failures than the attempts (2 in these tests) allow: an outage does not use them up.
        if (++calls <= 6) throw s3Unreachable();
      });
      await waitFor(async () => (outageSeen ??= await transport.outageRetries(QueueName.FrontierAdd)) !== null);
      expect(outageSeen).toEqual({ messages: 1, causes: { s3: 1 }, since: expect.any(String) });
      await waitFor(() => calls === 7);
      await waitForCounts(transport, QueueName.FrontierAdd, { waiting: 0, active: 0, delayed: 0, failed: 0 });
      expect(await transport.outageRetries(QueueName.FrontierAdd)).toBeNull();
    });

    it('keeps a message in the failed set once its outage outlasts the outage period, saying so', async () => {
      await transport.add(QueueName.FrontierAdd, token('a.test'));
      await transport.consume(QueueName.FrontierAdd, async () => {
        throw s3Unreachable();
      });
      await waitForCounts(transport, QueueName.FrontierAdd, { waiting: 0, active: 0, delayed: 0, failed: 1 });
      const [failed] = await transport.failed(QueueName.FrontierAdd);
      expect(failed.reason).toMatch(/ECONNREFUSED.*\(s3 unavailable for longer than \d+ ms\)$/);
    });

    it('close() waits for the in-flight handler', async () => {
      const gate = deferred();
      let started = false;
      let finished = false;
      await transport.add(QueueName.FrontierAdd, token('a.test'));
      await transport.consume(QueueName.FrontierAdd, async () => {
        started = true;
        await gate.promise;
        finished = true;
      });
      await waitFor(() => started);

      let closed = false;
      const closing = transport.close().then(() => (closed = true));
      await sleep(100);
      expect(closed).toBe(false);
      gate.resolve();
      await closing;
      expect(finished).toBe(true);
    });
  });
}

type CountsExpected = Partial<Record<'waiting' | 'active' | 'delayed' | 'failed', number>>;

/** Waits until the queue's job counts match `expected`. */
function waitForCounts(transport: QueueTransport, queue: QueueName, expected: CountsExpected): Promise<void> {
  return waitForTally('counts', (q) => transport.counts(q), queue, expected);
}

/** Waits until the queue's message counts match `expected`. */
function waitForMessages(transport: QueueTransport, queue: QueueName, expected: CountsExpected): Promise<void> {
  return waitForTally('messages', (q) => transport.messages(q), queue, expected);
}

async function waitForTally(what: string, read: (queue: QueueName) => Promise<QueueCounts>, queue: QueueName, expected: CountsExpected): Promise<void> {
  let last: unknown;
  await waitFor(async () => {
    const counts = await read(queue);
    last = counts;
    return Object.entries(expected).every(([k, v]) => counts[k as keyof typeof counts] === v);
  }).catch(() => {
    throw new Error(`${what} of ${queue} never matched ${JSON.stringify(expected)}; last ${JSON.stringify(last)}`);
  });
}

async function waitFor(condition: () => boolean | Promise<boolean>, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await sleep(10);
  }
}

/** What the S3 content store throws while its server is down. */
function s3Unreachable(): Error {
  const cause = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:9'), { code: 'ECONNREFUSED' });
  return new Error('content store: put s3://bucket/pages/x failed (ECONNREFUSED): connect ECONNREFUSED 127.0.0.1:9', { cause });
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}
