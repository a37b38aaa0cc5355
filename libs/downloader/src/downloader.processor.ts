import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import { Inject, Injectable, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { FetchOutcome, FetchRequest, fetchQueue, QueueName } from '@crawler/contracts';
import { CRAWLER_CONFIG, CrawlerConfig } from '@crawler/config';
import { DownloaderMembership, HeartbeatLoop } from '@crawler/hash-ring';
import { LOGGER, Logger } from '@crawler/logging';
import { CrawlStats, Pipeline } from '@crawler/runtime';
import { STATE_STORE, StateStore } from '@crawler/state';
import { DownloaderService } from './downloader.service';
import { KeptForRetry, leaseEnd } from './kept-for-retry';

/**
 * A downloader joins the hash ring by heartbeat and consumes its own shard of the fetch queue, so that
 * the frontier can send each host to the one downloader that owns it. Every turn ends with an outcome
 * for the frontier, which ends the URL's lease and releases the host.
 */
@Injectable()
export class DownloaderProcessor implements OnApplicationBootstrap, OnApplicationShutdown {
  readonly id: string;
  private readonly heartbeat: HeartbeatLoop;
  /** Leases this crawl's downloaders have started on (see `handle`). */
  private readonly leases: StateStore;
  /** Outcomes that could not be sent, by claim, for the job's retry. */
  private readonly unsent: KeptForRetry<FetchOutcome>;
  /** Deliveries being handled now: none once the transport has drained, unless its close gave up on some. */
  private inFlight = 0;

  constructor(
    private readonly pipeline: Pipeline,
    private readonly downloader: DownloaderService,
    @Inject(CRAWLER_CONFIG) private readonly config: CrawlerConfig,
    @Inject(STATE_STORE) state: StateStore,
    @Inject(LOGGER) private readonly logger: Logger,
    private readonly stats: CrawlStats,
  ) {
    this.leases = state.namespace('downloader-leases');
    this.unsent = new KeptForRetry(config.downloader.concurrency);
    // Unique per process start: a restarted downloader never picks up a queue the frontier has given up on.
    this.id = config.downloader.id ?? `${hostname().replace(/[^A-Za-z0-9_-]/g, '-')}-${process.pid}-${randomBytes(3).toString('hex')}`;
    const membership = new DownloaderMembership(state.namespace('downloaders'), { heartbeatMs: config.downloader.heartbeatMs });
    this.heartbeat = new HeartbeatLoop(membership, this.id, config.downloader.heartbeatMs, {
      onError: (err) => this.logger.warn({ event: 'heartbeat-failed', err }, 'heartbeat failed'),
    });
  }

  async onApplicationBootstrap() {
    await this.pipeline.consume(
      fetchQueue(this.id),
      async (request) => {
        this.inFlight++;
        try {
          await this.handle(request);
        } finally {
          this.inFlight--;
        }
      },
      { concurrency: this.config.downloader.concurrency },
    );
    // Redis down or full (OOM) at start: the loop keeps beating, and the downloader joins once one gets through.
    await this.heartbeat.start().then(
      () => this.logger.info({ event: 'downloader-joined', id: this.id }, 'joined the hash ring'),
      (err) => this.logger.warn({ event: 'heartbeat-failed', id: this.id, err }, 'could not join the hash ring yet: its heartbeats go on'),
    );
  }

  /**
   * One fetch per lease. A fetch job can be delivered twice for one lease — a dns-resolve job redelivered
   * after its process died re-sends it, and a job whose lock lapsed is handed out again — and the second
   * delivery would request the page again. The first delivery claims the lease; a later one does nothing
   * (the first sends the outcome). A delivery that fails before the page has answered gives its claim back,
   * so its retry fetches. One that fails after (the outcome or the page could not be handed on: Redis, S3
   * down) keeps what it got, and its retry, in this process, takes up from there without asking the site
   * again.
   */
  private async handle(request: FetchRequest) {
    // Each hop of a robots.txt redirect chain is one more delivery under the same lease: claimed apart.
    const claim = request.robotsHop ? `${request.leaseId}.hop${request.robotsHop.chain.length}` : request.leaseId;
    const unsent = this.unsent.take(claim);
    if (unsent) return this.finish(claim, unsent, request);
    const claimMs = this.claimMs(request.leaseExpiresAt);
    // No claim where no fetch may start any more (the downloader skips the request): nothing to keep from a repeat.
    if (!this.downloader.resumes(request) && claimMs > 0 && !(await this.leases.setIfAbsent(claim, this.id, claimMs))) {
      await this.stats.count('skipped.lease-already-taken');
      return;
    }
    let outcome;
    try {
      outcome = await this.downloader.download(request);
    } catch (error) {
      if (!this.downloader.resumes(request)) await this.leases.del(claim).catch(() => undefined);
      throw error;
    }
    // No outcome: the turn went on to the resolver (a robots.txt redirect to another host).
    if (outcome) await this.finish(claim, outcome, request);
  }

  /** Sends the outcome to the frontier; kept for the job's retry when it cannot be sent. */
  private async finish(claim: string, outcome: FetchOutcome, request: FetchRequest) {
    try {
      await this.pipeline.send(QueueName.FrontierDone, outcome);
    } catch (error) {
      this.unsent.keep(claim, outcome, leaseEnd(request, this.config.frontier.leaseMs));
      throw error;
    }
  }

  /**
   * How long a claim lives. A later delivery of the same lease need only be refused while it could still
   * fetch: from DOWNLOADER_TOTAL_TIMEOUT_MS before the lease ends, the downloader skips the request anyway. So
   * the claim lives until then, not the whole lease: Redis holds the claims of the fetches of the last minute or
   * so, not of every fetch in FRONTIER_LEASE_MS, and a claim is one write, never shortened after its fetch.
   */
  private claimMs(leaseExpiresAt: number | undefined): number {
    if (leaseExpiresAt === undefined) return this.config.frontier.leaseMs;
    return leaseExpiresAt - this.config.downloader.totalTimeoutMs - Date.now();
  }

  /**
   * After the transport has drained (in-flight fetches done), leave the ring, saying so: with no fetch of
   * this process under way, the frontier hands its hosts to the other downloaders at once instead of waiting
   * DOWNLOADER_TOTAL_TIMEOUT_MS for one to time out. Jobs still waiting in this shard are not fetched here:
   * the frontier reclaims their leases and dispatches the URLs again.
   */
  async onApplicationShutdown() {
    const drained = this.inFlight === 0;
    await this.heartbeat.stop({ drained }).catch((err) => this.logger.warn({ event: 'leave-failed', err }, 'could not leave the ring'));
    this.logger.info({ event: 'downloader-left', id: this.id, drained }, drained ? 'left the hash ring, drained' : 'left the hash ring with fetches in flight');
  }
}
