import { CanActivate, ExecutionContext, Inject, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { CRAWLER_CONFIG, CrawlerConfig } from '@crawler/config';
import { AccessRequest, changesTheCrawl, ControlApiAccess, HeaderSink, readsProtected } from '@crawler/runtime';
import { CONTROL_PLANE_ROUTE } from './control-plane-route';

/**
 * Who may use the control plane (ControlApiAccess says how): the token for every request that changes the
 * crawl, and for the reads of the crawl's data when they are protected (CONTROL_PLANE_PROTECT_READS, by
 * default whenever the control plane has a token and listens beyond loopback). The dashboard's page and its
 * script and style stay open (a navigation carries no header); /health and /metrics too.
 */
@Injectable()
export class ControlPlaneAuthGuard implements CanActivate {
  private readonly access: ControlApiAccess;
  private readonly protectReads: boolean;

  constructor(
    private readonly reflector: Reflector,
    @Inject(CRAWLER_CONFIG) config: CrawlerConfig,
  ) {
    this.access = new ControlApiAccess(config);
    this.protectReads = readsProtected(config);
  }

  canActivate(context: ExecutionContext): boolean {
    if (context.getType() !== 'http') return true;
    const kind = this.reflector.getAllAndOverride<'data' | 'shell' | undefined>(CONTROL_PLANE_ROUTE, [context.getHandler(), context.getClass()]);
    const http = context.switchToHttp();
    const request = http.getRequest<AccessRequest>();
    if (!kind && !changesTheCrawl(request)) return true;
    this.access.check(request, http.getResponse<HeaderSink>(), kind === 'data' && this.protectReads);
    return true;
  }
}
