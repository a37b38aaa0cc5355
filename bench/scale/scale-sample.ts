import type { ScaleObservation } from '../web/scale-web-observer';

/** One crawler process at a sample. */
export interface ProcessReading {
  /** Resident set (VmRSS), bytes; 0 once the process is gone. */
  rssBytes: number;
  /** V8 heap in use, bytes (from the process probe; null before its first reading). */
  heapUsedBytes: number | null;
  /** CPU used over the interval, in cores (1 = one core busy the whole interval). */
  cpuCores: number;
  /** p99 of the event-loop delay over the probe's last interval, ms. */
  eventLoopP99Ms: number | null;
}

export interface RedisMasterReading {
  address: string;
  /** INFO memory used_memory of the whole server (shared with whatever else it holds), bytes. */
  usedMemoryBytes: number;
  /** Keys under the run's prefix that do not expire (TTL -1), and their MEMORY USAGE, BullMQ's capped event streams left out. */
  lastingKeys: number;
  lastingBytes: number;
  /** Keys under the prefix that expire, and their bytes. */
  expiringKeys: number;
  expiringBytes: number;
}

/** Response time of the control plane's endpoints, ms (null: the endpoint failed). */
export type EndpointTimings = Record<string, number | null>;

export interface ScaleSample {
  /** Seconds since the crawl started. */
  seconds: number;
  /** Distinct pages fetched so far (the web's count). */
  pagesFetched: number;
  /** Pages per second over the interval since the sample before. */
  pagesPerSecond: number;
  requests: number;
  /** Process name → its figures. */
  processes: Record<string, ProcessReading>;
  /** Per master; empty when the shape keeps no state in Redis. */
  redis: RedisMasterReading[];
  /** pg_database_size of the run's database, bytes (null: no database). */
  postgresBytes: number | null;
  /** Bytes of page bodies stored: the S3 stand-in's directory, or the embedded crawl's --out. */
  storeBytes: number | null;
  /** The frontier's queued URLs and hosts with a back queue (null where not exposed). */
  frontierQueued: number | null;
  frontierHosts: number | null;
  frontierLeases: number | null;
  /**
   * p50 and p99 of the dispatch lateness over the interval (crawler_frontier_dispatch_lateness_seconds: from
   * a host's turn to the claim of its URL), ms, as the upper bound of the histogram bucket each falls in.
   */
  dispatchP50Ms: number | null;
  dispatchP99Ms: number | null;
  controlPlane?: EndpointTimings;
}

export type ShapeName = 'embedded' | 'distributed';

export interface ResumeFigures {
  /** Share of the reachable pages fetched when every crawler process was killed (SIGKILL). */
  killedAt: number;
  pagesAtKill: number;
  /** URLs in flight when killed (the frontier's leases, or the web's requests in flight): repeats allowed. */
  inFlightAtKill: number;
  /** Pages per second over the last full interval before the kill. */
  rateBeforeKill: number;
  /** Seconds from the kill to the end of the first interval at ≥ 0.9 × that rate (null: never). */
  secondsToFullSpeed: number | null;
  /** Seconds the processes took to start again. */
  restartSeconds: number;
}

export interface ShapeRun {
  shape: ShapeName;
  settings: string;
  complete: boolean;
  /** Why it ended when not complete (timeout, exit code). */
  notes: string[];
  seconds: number;
  samples: ScaleSample[];
  web: ScaleObservation;
  lost: { count: number; urls: string[] };
  /**
   * Leases the crawler itself handed out again (its totals `frontier.leases-expired` and `frontier.ring-reclaimed`):
   * a fetch that outlived FRONTIER_LEASE_MS, or a downloader taken for gone, is fetched again by design.
   */
  reclaimed: number;
  resume?: ResumeFigures;
}
