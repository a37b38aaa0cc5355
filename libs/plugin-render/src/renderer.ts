import type { Page, Route } from 'playwright-core';
import { BrowserCrashedError, BrowserPool, isClosedError } from './browser-pool';
import { GateAnswer, SubrequestGate } from './subrequest-gate';

export interface RenderOptions {
  timeoutMs: number;
  settleMs: number;
  blockTypes: readonly string[];
  maxSubrequests: number;
}

/** The page as the downloader fetched it: the browser is given these bytes, never fetches the page again. */
export interface FetchedDocument {
  url: string;
  status: number;
  contentType: string;
  body: Buffer;
}

/** Why a sub-request was not made. */
export type Refusal = Extract<GateAnswer, { ok: false }>['reason'] | 'blocked-type' | 'too-many' | 'navigation' | 'timeout' | 'websocket';

export interface RenderReport {
  /** Sub-requests answered by the gate. */
  fetched: number;
  /** Sub-requests refused, with why. */
  refused: { url: string; reason: Refusal; detail?: string }[];
  durationMs: number;
}

export type RenderOutcome =
  | ({ kind: 'rendered'; html: string } & RenderReport)
  /** Cut at the time limit (a script that never ends, a page that never settles): its DOM is not read. */
  | ({ kind: 'timeout' } & RenderReport);

/** The page's renderer died (out of memory, a crash) or the whole browser did: worth another try. */
export class RenderCrashedError extends BrowserCrashedError {}

/**
 * Renders one fetched page in a fresh context: the browser gets the fetched bytes for the page itself and
 * every other request goes through the SubrequestGate (or is refused), every WebSocket is closed unopened; after the load event and a short
 * settle (network idle), the DOM is serialised. The time limit is enforced from outside the page: when it
 * runs out the page is closed, which kills a renderer stuck in a script.
 */
export class Renderer {
  constructor(
    private readonly pool: BrowserPool,
    private readonly gate: SubrequestGate,
    private readonly options: RenderOptions,
  ) {}

  render(doc: FetchedDocument): Promise<RenderOutcome> {
    return this.pool.withContext(async (context) => {
      const started = performance.now();
      const report: RenderReport = { fetched: 0, refused: [], durationMs: 0 };
      const abort = new AbortController();
      let page: Page | undefined;
      let crashed: string | undefined;
      let servedDocument = false;
      let subrequests = 0;

      const refuse = (route: Route, url: string, reason: Refusal, detail?: string) => {
        report.refused.push({ url, reason, ...(detail ? { detail } : {}) });
        return route.abort(reason === 'address' || reason === 'dns' ? 'addressunreachable' : 'blockedbyclient').catch(() => undefined);
      };
      await context.route('**/*', async (route) => {
        const request = route.request();
        const url = request.url();
        if (abort.signal.aborted) return refuse(route, url, 'timeout');
        const mainFrame = page !== undefined && request.frame() === page.mainFrame();
        if (request.isNavigationRequest() && mainFrame) {
          // The page itself, as fetched; a script moving the page elsewhere is not followed.
          if (servedDocument) return refuse(route, url, 'navigation', 'the page tried to navigate away');
          servedDocument = true;
          return route.fulfill({ status: doc.status, contentType: doc.contentType, body: doc.body }).catch(() => undefined);
        }
        if (this.options.blockTypes.includes(request.resourceType())) return refuse(route, url, 'blocked-type', request.resourceType());
        if (++subrequests > this.options.maxSubrequests) return refuse(route, url, 'too-many');
        const answer = await this.gate
          .fetch(url, { method: request.method(), headers: request.headers(), body: request.postDataBuffer() }, abort.signal)
          .catch((error: Error): GateAnswer => ({ ok: false, reason: 'network', detail: error.message }));
        if (!answer.ok) return refuse(route, url, answer.reason, answer.detail);
        report.fetched++;
        return route.fulfill({ status: answer.status, headers: answer.headers, body: answer.body }).catch(() => undefined);
      });

      // A WebSocket is no request a route sees, and the gate has no way to pace or vet a connection that
      // stays open: each is answered here, closed at once, never connected to its server.
      await context.routeWebSocket(/.*/, (ws) => {
        report.refused.push({ url: ws.url(), reason: 'websocket' });
        void ws.close({ code: 1008, reason: 'WebSockets are not crawled' }).catch(() => undefined);
      });
      page = await context.newPage();
      page.on('crash', () => (crashed = 'the page crashed (out of memory, or killed)'));
      let timedOut = false;
      const timer = setTimeout(() => {
        timedOut = true;
        abort.abort(new Error('render time limit'));
        // Closing the page kills its renderer, even one stuck in a script that never returns.
        void page!.close({ runBeforeUnload: false }).catch(() => undefined);
      }, this.options.timeoutMs);
      try {
        await page.goto(doc.url, { waitUntil: 'load', timeout: this.options.timeoutMs + 1000 });
        const left = this.options.timeoutMs - (performance.now() - started);
        await page.waitForLoadState('networkidle', { timeout: Math.max(1, Math.min(this.options.settleMs, left)) }).catch(() => undefined);
        const html = await page.content();
        if (timedOut) return { kind: 'timeout', ...report, durationMs: performance.now() - started };
        return { kind: 'rendered', html, ...report, durationMs: performance.now() - started };
      } catch (error) {
        if (timedOut && !crashed) return { kind: 'timeout', ...report, durationMs: performance.now() - started };
        if (crashed) throw new RenderCrashedError(crashed);
        // Closed, and not by the time limit: the renderer or the whole browser went away under the page.
        if (isClosedError(error)) throw new RenderCrashedError((error as Error).message);
        throw error;
      } finally {
        clearTimeout(timer);
        abort.abort(new Error('render over'));
      }
    });
  }
}
