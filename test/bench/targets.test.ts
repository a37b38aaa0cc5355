import { targetChecks } from '../../bench/crawl/targets';
import type { CrawlRun } from '../../bench/report/results';
import { benchCrawlRun } from '../support/bench-crawl-run';

const run = (id: string, pagesPerSecond: number, redis?: CrawlRun['redis']) => benchCrawlRun(id, pagesPerSecond, redis ? { redis } : {});

describe('bench targets', () => {
  it('the cluster run is held to 0.85 of the one-node run, and its masters to a balance of 1.2', () => {
    const keysBytesPerMaster = [100, 100, 130].map((bytes, i) => ({ address: `127.0.0.1:700${i}`, keys: 10, bytes }));
    const checks = targetChecks(
      [run('ours-distributed', 500), run('ours-distributed-cluster', 450, { usedMemoryDelta: 0, peakUsedMemory: 0, commands: 0, cpuMs: 0, keysBytesPerMaster })],
      { hosts: 200, delayMs: 1000 },
    );
    const speed = checks.find((c) => c.label.startsWith('ours distributed on the cluster ÷'));
    expect(speed).toMatchObject({ value: 0.9, target: '≥ 0.85', met: true });
    const balance = checks.find((c) => c.label.startsWith('memory balance across masters'));
    expect(balance?.value).toBeCloseTo(130 / 110);
    expect(balance).toMatchObject({ target: '≤ 1.2', met: true });
  });

  it('without a cluster run there is no cluster target', () => {
    const checks = targetChecks([run('ours-distributed', 500)], { hosts: 200, delayMs: 1000 });
    expect(checks.filter((c) => /cluster|masters/.test(c.label))).toEqual([]);
  });
});
