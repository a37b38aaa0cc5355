import { BadRequestException, Body, Controller, Delete, Get, Inject, Param, Patch, Query, Req } from '@nestjs/common';
import { z } from 'zod';
import { FRONTIER_STORE, FrontierStore, HostInfo } from '@crawler/frontier-store';
import { BelowFloorError, HostOverrides } from './host-overrides.service';
import { ControlPlaneRoute } from './control-plane-route';
import { AuditedRequest, OperatorAudit } from './operator-audit.service';

const nullableMs = z.number().int().min(0).nullable().optional();
const HostControlsBody = z
  .object({
    /** Delay between two requests to the host, ms, at least FRONTIER_MIN_DELAY_MS unless FRONTIER_ALLOW_DELAY_BELOW_MIN (null: back to the computed delay). */
    delayMs: nullableMs,
    /** No request before this time: ISO date or ms since epoch (null: unblock). */
    blockedUntil: z
      .union([z.iso.datetime({ offset: true }), z.number().int().min(0)])
      .nullable()
      .optional(),
    /** Pages the host may be fetched in all (null: no budget). */
    budget: nullableMs,
  })
  .strict();

/** Hosts in one page of GET /hosts at most: a page is read from the store host by host. */
const HOSTS_PAGE_MAX = 500;
const HostsQuery = z
  .object({
    after: z.string().max(253).default(''),
    limit: z.coerce.number().int().min(1).max(HOSTS_PAGE_MAX).default(100),
  })
  .strict();

/**
 * Live control of the frontier while a crawl runs, per host (the bar is crawler-commons URLFrontier):
 * read a host's queue, next eligible time, delay and its cause, audit log; set its delay, block it, give
 * it a page budget, purge it.
 */
@Controller()
@ControlPlaneRoute('data')
export class FrontierController {
  constructor(
    @Inject(FRONTIER_STORE) private readonly frontier: FrontierStore,
    private readonly overrides: HostOverrides,
    private readonly audit: OperatorAudit,
  ) {}

  @Get('frontier')
  stats() {
    return this.frontier.stats();
  }

  /**
   * GET /hosts?after=<host>&limit=<n>: the hosts the frontier has served, in name order, a page at a time
   * (`next` is the `after` of the following page, null on the last): a crawl of 10⁴ hosts is never read whole.
   */
  @Get('hosts')
  async hosts(@Query() query: Record<string, unknown>) {
    const parsed = HostsQuery.safeParse(query ?? {});
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw new BadRequestException(`${issue.path.join('.') || 'query'}: ${issue.message} (expected ?after=<host>&limit=1…${HOSTS_PAGE_MAX})`);
    }
    const { after, limit } = parsed.data;
    const page = await this.frontier.knownHosts(after, limit);
    const hosts = await Promise.all(page.hosts.map(async (host) => withEligibleAt(await this.frontier.hostInfo(host))));
    return { total: page.total, hosts, next: hosts.length === limit ? hosts[hosts.length - 1].host : null };
  }

  @Get('hosts/:host')
  async host(@Param('host') host: string) {
    const [info, audit] = await Promise.all([this.frontier.hostInfo(host), this.frontier.auditLog(host)]);
    return { ...withEligibleAt(info), audit: audit.map((line) => JSON.parse(line)) };
  }

  @Patch('hosts/:host')
  async control(@Param('host') host: string, @Body() body: unknown, @Req() request: AuditedRequest) {
    const parsed = HostControlsBody.safeParse(body);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw new BadRequestException(`${issue.path.join('.') || 'body'}: ${issue.message} (allowed: delayMs, blockedUntil, budget)`);
    }
    const { blockedUntil, ...rest } = parsed.data;
    const controls = {
      ...rest,
      ...(blockedUntil === undefined ? {} : { blockedUntil: typeof blockedUntil === 'string' ? Date.parse(blockedUntil) : blockedUntil }),
    };
    let inForce: Awaited<ReturnType<HostOverrides['set']>>;
    try {
      inForce = await this.overrides.set(host, controls, Date.now());
    } catch (error) {
      if (error instanceof BelowFloorError) throw new BadRequestException(error.message);
      throw error;
    }
    await this.audit.record(request, 'host-controls', { host, ...controls, ...inForce });
    return this.host(host);
  }

  @Delete('hosts/:host/queue')
  async purge(@Param('host') host: string, @Req() request: AuditedRequest) {
    const dropped = await this.overrides.purge(host, Date.now());
    await this.audit.record(request, 'host-purge', { host, dropped });
    return { host, dropped };
  }
}

function withEligibleAt(info: HostInfo) {
  return { ...info, nextEligibleAt: info.nextAt === null ? null : new Date(info.nextAt).toISOString() };
}
