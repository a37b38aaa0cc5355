import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import { Inject, Injectable, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { fetchQueue, QueueName } from '@crawler/contracts';
import { CRAWLER_CONFIG, CrawlerConfig } from '@crawler/config';
import { DownloaderMembership, HeartbeatLoop } from '@crawler/hash-ring';
import { LOGGER, Logger } from '@crawler/logging';
import { Pipeline } from '@crawler/runtime';
import { STATE_STORE, StateStore } from '@crawler/state';
import { DownloaderService } from './downloader.service';

/**
 * A downloader joins the hash ring by heartbeat and consumes its own shard of the fetch queue, so that
 * the frontier can send each host to the one downloader that owns it. Every turn ends with an outcome
 * for the frontier, which ends the URL's lease and releases the host.
 */
@Injectable()
export class DownloaderProcessor implements OnApplicationBootstrap, OnApplicationShutdown {
  readonly id: string;
  private readonly heartbeat: HeartbeatLoop;

  constructor(
    private readonly pipeline: Pipeline,
    private readonly downloader: DownloaderService,
    @Inject(CRAWLER_CONFIG) private readonly config: CrawlerConfig,
    @Inject(STATE_STORE) state: StateStore,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {
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
      async (request) => this.pipeline.send(QueueName.FrontierDone, await this.downloader.download(request)),
      { concurrency: this.config.downloader.concurrency },
    );
    await this.heartbeat.start();
    this.logger.info({ event: 'downloader-joined', id: this.id }, 'joined the hash ring');
  }

  /**
   * After the transport has drained (in-flight fetches done), leave the ring. Jobs still waiting in this
   * shard are not fetched here: the frontier reclaims their leases and dispatches the URLs again.
   */
  async onApplicationShutdown() {
    await this.heartbeat.stop().catch((err) => this.logger.warn({ event: 'leave-failed', err }, 'could not leave the ring'));
  }
}
