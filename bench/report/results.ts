/**
 * What `npm run bench` measures, as written to bench/results/bench.json: the benchmark web, one entry per
 * crawl run (ours in both shapes, the peer, the ceiling, the polite runs), the micro-benchmarks, and the
 * target ratios computed from them.
 */
import type { CommandSource } from '../crawl/redis-breakdown';
import type { MachineCosts } from '../machine-costs';
import type { BenchWebShape } from '../web/bench-web';
import type { WebObservation } from '../web/web-observer';

export interface ProcessFigures {
  name: string;
  cpuMs: number;
  peakRssBytes: number;
}

export interface RedisFigures {
  /** used_memory after the run minus before, bytes. */
  usedMemoryDelta: number;
  /** Peak used_memory during the run, bytes. */
  peakUsedMemory: number;
  /** Commands Redis processed during the run (total_commands_processed Δ). */
  commands: number;
  /** Redis's own CPU during the run, ms. */
  cpuMs: number;
  /** On a cluster (the figures above are then the masters', summed): the replicas' CPU, ms, summed. */
  replicaCpuMs?: number;
  /** On a cluster: each master's and each replica's figures. */
  nodes?: RedisNodeFigures[];
  /**
   * On a cluster: the run's keys' memory on each master (MEMORY USAGE over a SCAN of the run's prefix, read
   * when the crawl is complete, before its keys are deleted), bytes.
   */
  /** Per master: the run's keys, their MEMORY USAGE, and the largest key families by it. */
  keysBytesPerMaster?: { address: string; keys: number; bytes: number; largest?: Record<string, number> }[];
  /** The commands that took most of Redis's time over the run (INFO commandstats Δ; a cluster's masters summed). */
  topCommands?: CommandStat[];
  /** With BENCH_REDIS_BREAKDOWN=1: the run's commands by where they came from (MONITOR, the masters'), the most first. */
  bySource?: CommandSource[];
}

export interface CommandStat {
  command: string;
  calls: number;
  /** Time Redis spent in it, µs. */
  usec: number;
}

/** One server of a Redis Cluster over a run (INFO before and after). */
export interface RedisNodeFigures {
  /** host:port. */
  address: string;
  role: 'master' | 'replica';
  /** used_memory after the run minus before, bytes. */
  usedMemoryDelta: number;
  /** Peak used_memory during the run, bytes. */
  peakUsedMemory: number;
  /** total_commands_processed Δ (a replica's are the writes it replays). */
  commands: number;
  /** used_cpu_sys + used_cpu_user Δ, ms. */
  cpuMs: number;
}

export interface CrawlRun {
  /** Stable id: 'ours-embedded', 'ours-distributed', 'crawlee', 'crawlee-delay', 'ceiling', 'polite-ours', … */
  id: string;
  label: string;
  /** What was asked: N pages, delay, politeness options, in words. */
  settings: string;
  /** 200 HTML pages the web served during the run. */
  pages: number;
  /** First process start (or seed) to the crawl's end, seconds: what pages/s is computed from. */
  seconds: number;
  pagesPerSecond: number;
  /** CPU of the crawler's own processes, summed (from /proc), ms, and per page. */
  cpuMs: number;
  cpuMsPerPage: number;
  /** The crawler's processes, each with its CPU and peak RSS. */
  processes: ProcessFigures[];
  /** Sum of the processes' peak RSS, bytes. */
  peakRssBytes: number;
  /** CPU of the infrastructure the run used (Redis, the S3 server), ms — reported apart, not in cpuMs. */
  infrastructure?: ProcessFigures[];
  redis?: RedisFigures;
  /** What the benchmark web saw. */
  web: WebObservation;
  /** Whether the crawler said it finished by itself (false: cut off by the harness's deadline). */
  complete: boolean;
  notes?: string[];
}

export interface MicroBenchmark {
  id: string;
  label: string;
  value: number;
  unit: string;
  /** The command that measures it alone. */
  command: string;
}

export interface TargetCheck {
  label: string;
  value: number;
  target: string;
  met: boolean;
}

export interface BenchResults {
  at: string;
  machine: { cpus: number; model: string; memoryGiB: number; node: string; redis?: string; costs?: MachineCosts };
  web: { hosts: number; pagesPerHost: number; meanPageBytes: number; latencyMs: number; buildMs: number; shape?: BenchWebShape; pageKb?: number };
  runs: CrawlRun[];
  micro: MicroBenchmark[];
  targets: TargetCheck[];
}
