/**
 * Idle cost (`npm run bench:idle`): the CPU and wake-ups a second of the distributed shape's nine services
 * with no crawl to do, under a fresh key prefix. What a deployment pays while it waits (a polite crawl
 * of few hosts is mostly waiting) and what every benchmark run carries beside its pages. Not a timed test:
 * the figures go to docs/performance.md.
 *
 *   BENCH_IDLE_SECONDS (60: measured, after BENCH_IDLE_SETTLE_SECONDS, 15, of start-up) REDIS_URL (redis://127.0.0.1:6379)
 */
import { readFileSync } from 'node:fs';
import { TestWebCluster } from '../test/support/test-web-cluster';
import { sampleProcess } from './process-sampler';

const SECONDS = Number(process.env.BENCH_IDLE_SECONDS ?? 60);
const SETTLE_SECONDS = Number(process.env.BENCH_IDLE_SETTLE_SECONDS ?? 15);

/** Times the process's threads gave up the CPU to wait: each is a wake-up later. */
function waits(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/^voluntary_ctxt_switches:\s+(\d+)/m.exec(status)?.[1] ?? 0);
}

async function main() {
  const cluster = new TestWebCluster({ hostsFile: () => '' });
  try {
    await cluster.start({ env: { REDIS_URL: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379' } });
    await new Promise((resolve) => setTimeout(resolve, SETTLE_SECONDS * 1000));
    const read = () => cluster.services.map((s) => ({ cpuMs: sampleProcess(s.process.pid!)?.cpuMs ?? 0, waits: waits(s.process.pid!) }));
    const before = read();
    await new Promise((resolve) => setTimeout(resolve, SECONDS * 1000));
    const after = read();
    console.log(`| service | CPU ms a second | wake-ups a second (main thread) |\n|---|---|---|`);
    let cpu = 0;
    cluster.services.forEach((s, i) => {
      const cpuPerSecond = (after[i].cpuMs - before[i].cpuMs) / SECONDS;
      cpu += cpuPerSecond;
      console.log(`| ${s.name} | ${cpuPerSecond.toFixed(1)} | ${((after[i].waits - before[i].waits) / SECONDS).toFixed(0)} |`);
    });
    console.log(`| all nine | ${cpu.toFixed(1)} | |`);
  } finally {
    await cluster.close();
  }
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
