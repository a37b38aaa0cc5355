import { createHash, timingSafeEqual } from 'node:crypto';
import { CanActivate, ExecutionContext, ForbiddenException, Inject, Injectable, UnauthorizedException, UnsupportedMediaTypeException } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { CRAWLER_CONFIG, CrawlerConfig } from '@crawler/config';
import { CONTROL_PLANE_ROUTE } from './control-plane-route';

/** The parts of an HTTP request and response the guard reads and writes (Express's, structurally). */
interface GuardedRequest {
  method: string;
  headers: Record<string, string | string[] | undefined>;
}
interface HeaderSink {
  setHeader(name: string, value: string): unknown;
}

const READ_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);
const LOOPBACK_NAMES = /^(localhost|127(?:\.\d{1,3}){3}|\[::1\])(?::\d+)?$/i;

const digest = (text: string) => createHash('sha256').update(text).digest();

/**
 * Who may use the control plane:
 * - with CONTROL_PLANE_TOKEN, a request that changes the crawl (any method but GET/HEAD) must carry
 *   `Authorization: Bearer <token>`; reads too when CONTROL_PLANE_PROTECT_READS is set. The token is compared
 *   by its SHA-256 digest in constant time, so neither its content nor its length leaks through timing.
 * - a request that changes the crawl must be JSON (`Content-Type: application/json`), token or not: an HTML
 *   form or a `text/plain` fetch from any web site can reach a browser's localhost without a CORS preflight,
 *   a JSON one cannot.
 * - without a token (loopback only), the Host header must name loopback: a web site that rebinds its own
 *   name to 127.0.0.1 gets its requests refused.
 */
@Injectable()
export class ControlPlaneAuthGuard implements CanActivate {
  private readonly token?: Buffer;

  constructor(
    private readonly reflector: Reflector,
    @Inject(CRAWLER_CONFIG) private readonly config: CrawlerConfig,
  ) {
    this.token = config.controlPlane.token ? digest(config.controlPlane.token) : undefined;
  }

  canActivate(context: ExecutionContext): boolean {
    if (context.getType() !== 'http') return true;
    const kind = this.reflector.getAllAndOverride<'data' | 'shell' | undefined>(CONTROL_PLANE_ROUTE, [context.getHandler(), context.getClass()]);
    const http = context.switchToHttp();
    const request = http.getRequest<GuardedRequest>();
    const changes = !READ_METHODS.has(request.method.toUpperCase());
    if (!kind && !changes) return true;
    if (!this.token && !this.config.controlPlane.allowUnauthenticated) this.checkLoopbackHost(request);
    if (changes || (kind === 'data' && this.config.controlPlane.protectReads)) this.authenticate(request, http.getResponse<HeaderSink>());
    if (changes) this.checkJson(request);
    return true;
  }

  private authenticate(request: GuardedRequest, response: HeaderSink): void {
    if (!this.token) return;
    const header = request.headers.authorization;
    const match = typeof header === 'string' ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
    if (match && timingSafeEqual(digest(match[1]), this.token)) return;
    response.setHeader('www-authenticate', 'Bearer realm="crawler control plane"');
    throw new UnauthorizedException(
      match ? 'wrong control-plane token' : 'this route needs the control-plane token: send the header Authorization: Bearer <CONTROL_PLANE_TOKEN>',
    );
  }

  private checkJson(request: GuardedRequest): void {
    const type = String(request.headers['content-type'] ?? '')
      .split(';')[0]
      .trim()
      .toLowerCase();
    if (type === 'application/json') return;
    throw new UnsupportedMediaTypeException(
      `send Content-Type: application/json (got ${type || 'none'}): a request that changes the crawl must be JSON, so that no web page's form can send one`,
    );
  }

  private checkLoopbackHost(request: GuardedRequest): void {
    const host = String(request.headers.host ?? '');
    if (LOOPBACK_NAMES.test(host)) return;
    throw new ForbiddenException(
      `Host ${host || '(none)'} is not this machine's loopback: without CONTROL_PLANE_TOKEN the control plane answers only to 127.0.0.1, localhost or [::1]`,
    );
  }
}
