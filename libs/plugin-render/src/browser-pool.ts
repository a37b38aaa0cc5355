import { Browser, BrowserContext, BrowserServer, chromium } from 'playwright-core';

export interface BrowserPoolOptions {
  chromiumPath: string;
  /** Contexts lent at once. */
  contexts: number;
  /** V8 heap limit of each renderer, in MB. */
  maxHeapMb: number;
}

/** Chromium's resolver answers "no such host" for every name and address. */
export const NO_NETWORK_OF_ITS_OWN = '--host-resolver-rules=MAP * ~NOTFOUND';

/** The browser died (crashed, killed) while a render was using it: the render is worth another try. */
export class BrowserCrashedError extends Error {
  constructor(detail: string) {
    super(`the browser crashed during the render: ${detail}`);
    this.name = 'BrowserCrashedError';
  }
}

/**
 * One headless Chromium per process, lent out as fresh browser contexts (no cookies or storage shared
 * between pages), at most `contexts` at once; the others wait their turn. A browser that dies is replaced
 * on the next lend: the renders it was running fail with BrowserCrashedError, and their jobs are retried.
 */
export class BrowserPool {
  private server?: BrowserServer;
  private browser?: Promise<Browser>;
  private inUse = 0;
  private readonly waiting: (() => void)[] = [];
  private closed = false;
  private readonly dead = new WeakSet<Browser>();
  /** Browsers started so far (the first, then one per restart). */
  launches = 0;

  constructor(private readonly options: BrowserPoolOptions) {}

  /** Starts the browser now, so that a Chromium that cannot run stops the service at boot. */
  async start(): Promise<void> {
    await this.current();
  }

  /** Runs `use` with a fresh context of the browser, and closes the context after. */
  async withContext<T>(use: (context: BrowserContext) => Promise<T>): Promise<T> {
    await this.slot();
    try {
      let browser = await this.current();
      let context: BrowserContext;
      try {
        context = await this.newContext(browser);
      } catch (error) {
        if (!isClosedError(error)) throw error;
        // It died since the last page (and has not said so yet): one more try, on a new browser.
        this.discard(browser);
        browser = await this.current();
        context = await this.newContext(browser);
      }
      try {
        return await use(context);
      } catch (error) {
        if (error instanceof BrowserCrashedError || !browser.isConnected() || isClosedError(error)) {
          // A page's own crash leaves the browser up; a closed browser connection does not.
          if (!browser.isConnected() || /browser (has been )?closed/i.test((error as Error).message)) this.discard(browser);
          throw error instanceof BrowserCrashedError ? error : new BrowserCrashedError((error as Error).message);
        }
        throw error;
      } finally {
        await context.close().catch(() => undefined);
      }
    } finally {
      this.release();
    }
  }

  private newContext(browser: Browser): Promise<BrowserContext> {
    return browser.newContext({ javaScriptEnabled: true, serviceWorkers: 'block', acceptDownloads: false });
  }

  /** Forgets a browser that died, so that the next lend starts another (it may not know it is dead yet). */
  private discard(browser: Browser) {
    this.dead.add(browser);
  }

  /** The browser's process id (tests kill it to check that a crash is survived). */
  pid(): number | undefined {
    return this.server?.process().pid;
  }

  async close(): Promise<void> {
    this.closed = true;
    const browser = await this.browser?.catch(() => undefined);
    await browser?.close().catch(() => undefined);
    await this.server?.close().catch(() => undefined);
  }

  private async current(): Promise<Browser> {
    for (;;) {
      if (this.closed) throw new Error('the browser pool is closed');
      const pending = (this.browser ??= this.launch());
      let browser: Browser;
      try {
        browser = await pending;
      } catch (error) {
        if (this.browser === pending) this.browser = undefined;
        throw error;
      }
      if (browser.isConnected() && !this.dead.has(browser)) return browser;
      // Dead: the first caller to notice starts the next one, the others wait for it.
      if (this.browser === pending) this.browser = this.launch();
    }
  }

  private async launch(): Promise<Browser> {
    const previous = this.server;
    this.server = undefined;
    await previous?.kill().catch(() => undefined);
    const server = await chromium.launchServer({
      executablePath: this.options.chromiumPath,
      headless: true,
      // No sandbox: containers run Chromium without the user namespaces it needs; the crawler's own
      // checks (every request routed, vetted, robots.txt) are what keep a page in, not the sandbox.
      // No name, not even an IP literal, resolves inside the browser: what a route never sees (a redirect
      // it follows by itself, a WebSocket, a preconnect) can connect nowhere, and every byte a page gets
      // comes through the crawler's gate, from the address it vetted.
      args: [
        NO_NETWORK_OF_ITS_OWN,
        '--no-sandbox',
        '--disable-dev-shm-usage',
        `--js-flags=--max-old-space-size=${this.options.maxHeapMb}`,
        '--disable-gpu',
        '--mute-audio',
      ],
    });
    this.server = server;
    this.launches++;
    return chromium.connect(server.wsEndpoint());
  }

  private async slot(): Promise<void> {
    if (this.inUse < this.options.contexts) {
      this.inUse++;
      return;
    }
    await new Promise<void>((resolve) => this.waiting.push(resolve));
  }

  private release() {
    const next = this.waiting.shift();
    if (next) next();
    else this.inUse--;
  }
}

/** Playwright's error for a page, context or browser that went away under an operation. */
export function isClosedError(error: unknown): boolean {
  const e = error as Error;
  return e?.name === 'TargetClosedError' || e?.constructor?.name?.startsWith('TargetClosedError') || /\bclosed\b|crash/i.test(e?.message ?? '');
}
