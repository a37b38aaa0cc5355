import { targetChecks } from '../../bench/crawl/targets';
import type { CrawlRun } from '../../bench/report/results';
import { benchCrawlRun } from '../support/bench-crawl-run';

const run = (id: string, pagesPerSecond: number, redis?: CrawlRun['redis']) => benchCrawlRun(id, pagesPerSecond, redis ? { redis } : {});

describe('bench targets', () => {
  it('the cluster run is held to 0.9 of the one-node run, and its masters to a balance of 1.2', () => {
    const keysBytesPerMaster = [100, 100, 130].map((bytes, i) => ({ address: `127.0.0.1:700${i}`, keys: 10, bytes }));
    const checks = targetChecks(
      [run('ours-distributed', 500), run('ours-distributed-cluster', 450, { usedMemoryDelta: 0, peakUsedMemory: 0, commands: 0, cpuMs: 0, keysBytesPerMaster })],
      { hosts: 200, delayMs: 1000 },
    );
    const speed = checks.find((c) => c.label.startsWith('ours distributed on the cluster ÷'));
    expect(speed).toMatchObject({ value: 0.9, target: '≥ 0.9', met: true });
    const balance = checks.find((c) => c.label.startsWith('memory balance across masters'));
    expect(balance?.value).toBeCloseTo(130 / 110);
    expect(balance).toMatchObject({ target: '≤ 1.2', met: true });
  });

  it('holds the distributed shape to 1.5 times the embedded CPU a page, and to 50 Redis commands a page on a node and 60 on a cluster', () => {
    const redis = (commands: number) => ({ usedMemoryDelta: 0, peakUsedMemory: 0, commands, cpuMs: 0 });
    const checks = targetChecks(
      [
        benchCrawlRun('ours-embedded', 700, { cpuMsPerPage: 2 }),
        benchCrawlRun('ours-distributed', 350, { cpuMsPerPage: 3, redis: redis(50_000) }),
        benchCrawlRun('ours-distributed-cluster', 340, { cpuMsPerPage: 3.2, redis: redis(61_000) }),
        benchCrawlRun('crawlee', 60),
      ],
      { hosts: 200, delayMs: 1000 },
    );
    const check = (start: string) => checks.find((c) => c.label.startsWith(start));
    expect(check('ours distributed ÷ ours embedded, CPU')).toMatchObject({ value: 1.5, target: '≤ 1.5', met: true });
    expect(check('ours distributed on the cluster ÷ ours embedded, CPU')).toMatchObject({ value: 1.6, met: false });
    expect(check('ours distributed, Redis commands a page')).toMatchObject({ value: 50, target: '≤ 50', met: true });
    expect(check('ours distributed on the cluster, Redis commands a page')).toMatchObject({ value: 61, target: '≤ 60', met: false });
    expect(check('ours distributed ÷ Crawlee')).toMatchObject({ value: 350 / 60, target: '≥ 6', met: false });
  });

  it('without a cluster run there is no cluster target', () => {
    const checks = targetChecks([run('ours-distributed', 500)], { hosts: 200, delayMs: 1000 });
    expect(checks.filter((c) => /cluster|masters/.test(c.label))).toEqual([]);
  });
});
