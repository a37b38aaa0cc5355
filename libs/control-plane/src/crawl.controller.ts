import { BadRequestException, Body, Controller, Get, HttpCode, Inject, NotFoundException, Post, Query, Req, Res, ServiceUnavailableException } from '@nestjs/common';
import { z } from 'zod';
import { CRAWLER_CONFIG, CrawlerConfig } from '@crawler/config';
import { infrastructureCause } from '@crawler/queue';
import { FailedUrls } from '@crawler/crawl-state';
import { CrawlControlService, SeedError } from './crawl-control.service';
import { CrawlMonitor } from './crawl-monitor.service';
import { LiveStatus } from './live-status.service';
import { DeadLetters, UnknownQueueError } from './dead-letters.service';
import { UrlLookupError, UrlLookupService } from './url-lookup.service';
import { AuditedRequest, OperatorAudit } from './operator-audit.service';
import { ControlPlaneRoute } from './control-plane-route';

const SeedsBody = z.object({ urls: z.array(z.string()).min(1).max(100_000) });
const PauseBody = z.object({ reason: z.string().max(500).optional() }).strict();
const ReplayBody = z.object({ queue: z.string().max(200).optional() }).strict();
/** GET /failed-urls: at most as many as the record keeps (FRONTIER_FAILED_URLS_KEPT). */
const failedUrlsQuery = (kept: number) =>
  z
    .object({
      limit: z.coerce.number().int().min(1).max(kept).default(Math.min(100, kept)),
      reason: z
        .string()
        .regex(/^[a-z0-9-]{1,40}$/, 'a reason such as status-500, reset, timeout-total')
        .optional(),
    })
    .strict();

/** GET /audit: at most as many as the audit keeps (CONTROL_PLANE_AUDIT_KEPT). */
const auditQuery = (kept: number) => z.object({ limit: z.coerce.number().int().min(1).max(kept).default(Math.min(100, kept)) }).strict();
/** How many of a submission's seeds an audit entry names (the count says the rest). */
const SEEDS_NAMED = 5;

/** The part of an HTTP response the content route sets headers on (Express's, structurally). */
interface HeaderSink {
  setHeader(name: string, value: string): unknown;
}

@Controller()
@ControlPlaneRoute('data')
export class CrawlController {
  constructor(
    private readonly control: CrawlControlService,
    private readonly monitor: CrawlMonitor,
    private readonly live: LiveStatus,
    private readonly urls: UrlLookupService,
    private readonly dead: DeadLetters,
    private readonly failedUrls: FailedUrls,
    private readonly audit: OperatorAudit,
    @Inject(CRAWLER_CONFIG) private readonly config: CrawlerConfig,
  ) {}

  /** GET /audit?limit=<n>: the operator actions taken through the control plane, newest first, with who, from where and when. */
  @Get('audit')
  async operatorAudit(@Query() query: Record<string, unknown>) {
    const kept = this.config.controlPlane.auditKept;
    const parsed = auditQuery(kept).safeParse(query ?? {});
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw new BadRequestException(`${issue.path.join('.') || 'query'}: ${issue.message} (expected ?limit=1…${kept})`);
    }
    return this.audit.list(parsed.data.limit);
  }

  /**
   * GET /failed-urls?limit=<n>&reason=<reason>: the URLs the crawl gave up on, newest first, each with its
   * reason, requests made, last status or error (not to be confused with GET /failed: queue messages).
   */
  @Get('failed-urls')
  async failedUrlList(@Query() query: Record<string, unknown>) {
    const kept = this.config.frontier.failedUrlsKept;
    const parsed = failedUrlsQuery(kept).safeParse(query ?? {});
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw new BadRequestException(`${issue.path.join('.') || 'query'}: ${issue.message} (expected ?limit=1…${kept}&reason=<reason>)`);
    }
    return this.failedUrls.list(parsed.data.limit, parsed.data.reason);
  }

  /** GET /dead-letters: the most recent malformed messages, newest first, each with its queue and the reason. */
  @Get('dead-letters')
  async deadLetters() {
    return { letters: await this.dead.letters() };
  }

  /** GET /failed?queue=<name>: messages whose attempts ran out, by queue (every queue with any, or the one named). */
  @Get('failed')
  failed(@Query('queue') queue?: string) {
    return this.queueCall(() => this.dead.failures(queue));
  }

  /** POST /failed/replay {"queue"?: name}: sends failed messages round again (after fixing their cause). */
  @Post('failed/replay')
  @HttpCode(200)
  async replay(@Body() body: unknown, @Req() request: AuditedRequest) {
    const parsed = ReplayBody.safeParse(body ?? {});
    if (!parsed.success) throw new BadRequestException(`expected {"queue"?: string}: ${parsed.error.issues[0].message}`);
    const replayed = await this.queueCall(() => this.dead.replay(parsed.data.queue));
    await this.audit.record(request, 'replay-failed', { queue: parsed.data.queue ?? null, replayed });
    return { replayed };
  }

  private async queueCall<T>(run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (error) {
      if (error instanceof UnknownQueueError) throw new BadRequestException(`queue: ${error.message}`);
      throw error;
    }
  }

  /** POST /seeds {"urls": ["https://example.com/", "example.org"]} → 201 {"accepted": [canonical seed URLs]} */
  @Post('seeds')
  async seeds(@Body() body: unknown, @Req() request: AuditedRequest) {
    const parsed = SeedsBody.safeParse(body);
    if (!parsed.success) throw new BadRequestException(`expected {"urls": [string, …]}: ${parsed.error.issues[0].message}`);
    let accepted: string[];
    try {
      accepted = await this.control.submitSeeds(parsed.data.urls);
    } catch (error) {
      if (error instanceof SeedError) throw new BadRequestException({ message: error.message, problems: error.problems });
      throw error;
    }
    await this.audit.record(request, 'seeds', { count: accepted.length, first: accepted.slice(0, SEEDS_NAMED) });
    return { accepted };
  }

  /**
   * GET /status: stages with queue depths and rates, totals, pause state, top hosts, recent errors,
   * completion; within CONTROL_PLANE_STATUS_TIMEOUT_MS, with the stores that are down (see LiveStatus).
   */
  @Get('status')
  status() {
    return this.live.current();
  }

  /** GET /status/history?since=<ms>: the throughput chart's points (rates per sample period), oldest first. */
  @Get('status/history')
  history(@Query('since') since?: string) {
    const after = since === undefined ? 0 : Number(since);
    if (!Number.isFinite(after)) throw new BadRequestException('since: expected milliseconds since the epoch');
    return { sampleMs: this.monitor.options.sampleMs, points: this.monitor.history(after) };
  }

  /** POST /pause {"reason"?: string}: no URL is dispatched until /resume; requests in flight finish. */
  @Post('pause')
  @HttpCode(200)
  async pause(@Body() body: unknown, @Req() request: AuditedRequest) {
    const parsed = PauseBody.safeParse(body ?? {});
    if (!parsed.success) throw new BadRequestException(`expected {"reason"?: string}: ${parsed.error.issues[0].message}`);
    const state = await this.control.pause(parsed.data.reason);
    await this.audit.record(request, 'pause', { reason: parsed.data.reason ?? null, since: state.since });
    return state;
  }

  /** POST /resume: dispatching starts again (within a dispatcher tick, ≤ 200 ms). */
  @Post('resume')
  @HttpCode(200)
  async resume(@Req() request: AuditedRequest) {
    const state = await this.control.resume();
    await this.audit.record(request, 'resume', {});
    return state;
  }

  /** GET /urls?url=<url>: the URL's record (stored, duplicate of…, or unknown → 404) and its host's frontier state. */
  @Get('urls')
  async url(@Query('url') url?: string) {
    const found = await this.lookup(() => this.urls.lookup(this.required(url)));
    if (found.state === 'unknown') throw new NotFoundException({ ...found, message: `no record of ${found.url}: not fetched yet, not a page, or failed` });
    return found;
  }

  /**
   * GET /urls/content?url=<url>: the stored body (a duplicate's original's), decoded to UTF-8 text. Served as
   * text/plain and sandboxed: crawled HTML never runs in the control plane's origin.
   */
  @Get('urls/content')
  async content(@Query('url') url: string | undefined, @Res({ passthrough: true }) res: HeaderSink) {
    const stored = await this.lookup(() => this.urls.content(this.required(url)));
    if (!stored) throw new NotFoundException(`nothing stored for ${url}`);
    res.setHeader('content-type', 'text/plain; charset=utf-8');
    res.setHeader('x-content-type-options', 'nosniff');
    res.setHeader('content-security-policy', 'sandbox');
    res.setHeader('x-content-key', stored.contentKey);
    if (stored.meta.fetchedAt) res.setHeader('x-fetched-at', stored.meta.fetchedAt);
    if (stored.originalUrl) res.setHeader('x-original-url', encodeURI(stored.originalUrl));
    return stored.text;
  }

  private required(url: string | undefined): string {
    if (!url) throw new BadRequestException('url: required query parameter (an absolute URL)');
    return url;
  }

  private async lookup<T>(run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (error) {
      if (error instanceof UrlLookupError) throw new BadRequestException(`url: ${error.message}`);
      // The records' database (or the content store) away: a 503 saying so, not a bare 500.
      if (infrastructureCause(error)) throw new ServiceUnavailableException((error as Error).message);
      throw error;
    }
  }
}
