import { targetChecks } from '../../bench/crawl/targets';
import type { CrawlRun } from '../../bench/report/results';

const web = {
  requests: 1010,
  pages: 1000,
  byStatus: { '200': 1010 },
  bytes: 30_000_000,
  windowMs: 5000,
  hostsVisited: 10,
  maxInFlightPerHost: 1,
  minIntervalMs: 12,
  minIdleGapMs: 0,
  robotsViolations: 0,
  beforeRobots: 0,
  repeatRequests: 0,
  maxInFlight: 10,
};

function run(id: string, pagesPerSecond: number, redis?: CrawlRun['redis']): CrawlRun {
  return {
    id,
    label: id,
    settings: '',
    pages: 1000,
    seconds: 1000 / pagesPerSecond,
    pagesPerSecond,
    cpuMs: 2500,
    cpuMsPerPage: 2.5,
    processes: [],
    peakRssBytes: 0,
    web,
    complete: true,
    ...(redis ? { redis } : {}),
  };
}

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
