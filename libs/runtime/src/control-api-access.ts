import { createHash, timingSafeEqual } from 'node:crypto';
import { ForbiddenException, HttpException, UnauthorizedException, UnsupportedMediaTypeException } from '@nestjs/common';
import type { CrawlerConfig } from '@crawler/config';

/** The parts of an HTTP request and response the checks read and write (Express's, structurally). */
export interface AccessRequest {
  method: string;
  headers: Record<string, string | string[] | undefined>;
}
export interface HeaderSink {
  setHeader(name: string, value: string): unknown;
}
interface JsonResponse extends HeaderSink {
  status(code: number): { json(body: unknown): unknown };
}

const READ_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);
const LOOPBACK_NAMES = /^(localhost|127(?:\.\d{1,3}){3}|\[::1\])(?::\d+)?$/i;

const digest = (text: string) => createHash('sha256').update(text).digest();

/** Any method but GET, HEAD and OPTIONS changes the crawl. */
export const changesTheCrawl = (request: AccessRequest) => !READ_METHODS.has(request.method.toUpperCase());

/**
 * Who may use a control API (the control plane's routes):
 * - with CONTROL_PLANE_TOKEN, a request must carry `Authorization: Bearer <token>` when it changes the crawl,
 *   and when it reads it where reads are protected. The token is compared by its SHA-256 digest in constant
 *   time, so neither its content nor its length leaks through timing.
 * - a request that changes the crawl must be JSON (`Content-Type: application/json`), token or not: an HTML
 *   form or a `text/plain` fetch from any web site can reach a browser's localhost without a CORS preflight,
 *   a JSON one cannot.
 * - without a token (loopback only), the Host header must name loopback: a web site that rebinds its own
 *   name to 127.0.0.1 gets its requests refused.
 */
export class ControlApiAccess {
  private readonly token?: Buffer;

  constructor(private readonly config: CrawlerConfig) {
    this.token = config.controlPlane.token ? digest(config.controlPlane.token) : undefined;
  }

  /** Throws the refusal (403, 401, 415) of a request to a control route; `needsToken`: a read that is protected. */
  check(request: AccessRequest, response: HeaderSink, needsToken: boolean): void {
    const changes = changesTheCrawl(request);
    if (!this.token && !this.config.controlPlane.allowUnauthenticated) this.checkLoopbackHost(request);
    if (changes || needsToken) this.authenticate(request, response);
    if (changes) this.checkJson(request);
  }

  /**
   * Express middleware that refuses a request changing the crawl before its body is read: a stranger's
   * malformed or oversized body gets the 401 it deserves, not a 400 or 413 that says it was parsed.
   */
  beforeBody() {
    return (request: AccessRequest, response: JsonResponse, next: () => void) => {
      if (!changesTheCrawl(request)) return next();
      try {
        this.check(request, response, false);
      } catch (error) {
        if (!(error instanceof HttpException)) throw error;
        response.status(error.getStatus()).json(error.getResponse());
        return;
      }
      next();
    };
  }

  private authenticate(request: AccessRequest, response: HeaderSink): void {
    if (!this.token) return;
    const header = request.headers.authorization;
    const match = typeof header === 'string' ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
    if (match && timingSafeEqual(digest(match[1]), this.token)) return;
    response.setHeader('www-authenticate', 'Bearer realm="crawler control plane"');
    throw new UnauthorizedException(
      match ? 'wrong control-plane token' : 'this route needs the control-plane token: send the header Authorization: Bearer <CONTROL_PLANE_TOKEN>',
    );
  }

  private checkJson(request: AccessRequest): void {
    const type = String(request.headers['content-type'] ?? '')
      .split(';')[0]
      .trim()
      .toLowerCase();
    if (type === 'application/json') return;
    throw new UnsupportedMediaTypeException(
      `send Content-Type: application/json (got ${type || 'none'}): a request that changes the crawl must be JSON, so that no web page's form can send one`,
    );
  }

  private checkLoopbackHost(request: AccessRequest): void {
    const host = String(request.headers.host ?? '');
    if (LOOPBACK_NAMES.test(host)) return;
    throw new ForbiddenException(
      `Host ${host || '(none)'} is not this machine's loopback: without CONTROL_PLANE_TOKEN the control plane answers only to 127.0.0.1, localhost or [::1]`,
    );
  }
}
