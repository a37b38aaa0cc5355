import { ChildProcess, fork } from 'node:child_process';
import { join } from 'node:path';
import type { BenchWebServerOptions, ParentMessage, ServerMessage } from './bench-web-server';
import type { WebObservation } from './web-observer';

/** The benchmark web, running in a child process: its seeds, hosts file and observations. */
export class BenchWebProcess {
  port = 0;
  hosts: { name: string; ip: string }[] = [];
  pageBytes = 0;
  buildMs = 0;
  pagesPerHost = 0;
  private child?: ChildProcess;
  private nextId = 1;
  private readonly pending = new Map<number, (o: WebObservation) => void>();

  static async start(options: BenchWebServerOptions): Promise<BenchWebProcess> {
    const web = new BenchWebProcess();
    await web.spawn(options);
    return web;
  }

  get pid(): number {
    return this.child!.pid!;
  }

  seeds(): string[] {
    return this.hosts.map((h) => `http://${h.name}:${this.port}/`);
  }

  /** The first `limit` page URLs in host round-robin order (what a breadth-first crawl covers first). */
  pageUrls(limit: number): string[] {
    const urls: string[] = [];
    for (let p = 0; p < this.pagesPerHost && urls.length < limit; p++) {
      for (const host of this.hosts) {
        if (urls.length >= limit) break;
        urls.push(`http://${host.name}:${this.port}${p === 0 ? '/' : `/p/${p}`}`);
      }
    }
    return urls;
  }

  hostsFile(): string {
    return `${this.hosts.map((h) => `${h.ip} ${h.name}`).join('\n')}\n`;
  }

  /** What the web saw since the last reset; `reset` starts a new count. */
  observe(reset = false): Promise<WebObservation> {
    const id = this.nextId++;
    return new Promise((resolve) => {
      this.pending.set(id, resolve);
      this.child!.send({ type: 'observe', id, reset } satisfies ParentMessage);
    });
  }

  async close(): Promise<void> {
    if (!this.child || this.child.exitCode !== null) return;
    const exited = new Promise((resolve) => this.child!.once('exit', resolve));
    this.child.kill('SIGTERM');
    await exited;
  }

  private spawn(options: BenchWebServerOptions): Promise<void> {
    this.pagesPerHost = options.pagesPerHost;
    // Every page is held in memory (about 3 GB at 200 hosts × 500 pages, mostly outside the JS heap).
    this.child = fork(join(__dirname, 'bench-web-server.js'), [JSON.stringify(options)], {
      execArgv: ['--max-old-space-size=16384'],
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    return new Promise((resolve, reject) => {
      this.child!.once('exit', (code) => reject(new Error(`bench web exited with ${code}`)));
      this.child!.on('message', (message: ServerMessage) => {
        if (message.type === 'ready') {
          this.port = message.port;
          this.hosts = message.hosts;
          this.pageBytes = message.pageBytes;
          this.buildMs = message.buildMs;
          resolve();
        } else if (message.type === 'observation') {
          this.pending.get(message.id)?.(message.observation);
          this.pending.delete(message.id);
        }
      });
    });
  }
}
