import { ChildProcess, fork } from 'node:child_process';
import { join } from 'node:path';
import type { ScaleParentMessage, ScaleServerMessage, ScaleWebServerOptions } from './scale-web-server';
import type { ScaleObservation } from './scale-web-observer';

/** The scale web, running in a child process: its seeds, hosts file, counts and lost pages. */
export class ScaleWebProcess {
  port = 0;
  addresses = 0;
  private hostsLines = '';
  private child?: ChildProcess;
  private nextId = 1;
  private readonly pending = new Map<number, { resolve: (message: ScaleServerMessage) => void; reject: (error: Error) => void }>();
  /** Why the web is gone, once it is: every question after that fails with it. */
  private gone?: Error;

  private constructor(readonly options: ScaleWebServerOptions) {}

  static async start(options: ScaleWebServerOptions): Promise<ScaleWebProcess> {
    const web = new ScaleWebProcess(options);
    await web.spawn();
    return web;
  }

  get pid(): number {
    return this.child!.pid!;
  }

  get reachablePages(): number {
    return this.options.hosts * this.options.pagesPerHost;
  }

  /** Every host's home page. */
  seeds(): string[] {
    const width = Math.max(5, String(this.options.hosts).length);
    return Array.from({ length: this.options.hosts }, (_, h) => `http://site-${String(h + 1).padStart(width, '0')}.test:${this.port}/`);
  }

  hostsFile(): string {
    return this.hostsLines;
  }

  async observe(): Promise<ScaleObservation> {
    const reply = await this.ask({ type: 'observe', id: this.nextId++ });
    if (reply.type !== 'observation') throw new Error(`scale web answered ${reply.type} to observe`);
    return reply.observation;
  }

  /** Reachable pages never asked for: the count, and the first `limit` URLs. */
  async lost(limit = 20): Promise<{ count: number; urls: string[] }> {
    const reply = await this.ask({ type: 'lost', id: this.nextId++, limit });
    if (reply.type !== 'lost') throw new Error(`scale web answered ${reply.type} to lost`);
    return reply.lost;
  }

  async close(): Promise<void> {
    if (!this.child || this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = new Promise((resolve) => this.child!.once('exit', resolve));
    this.child.kill('SIGTERM');
    await exited;
  }

  private ask(message: ScaleParentMessage): Promise<ScaleServerMessage> {
    if (this.gone) return Promise.reject(this.gone);
    return new Promise((resolve, reject) => {
      this.pending.set(message.id, { resolve, reject });
      this.child!.send(message, (error) => {
        if (!error) return;
        this.pending.delete(message.id);
        reject(this.gone ?? error);
      });
    });
  }

  private spawn(): Promise<void> {
    this.child = fork(join(__dirname, 'scale-web-server.js'), [JSON.stringify(this.options)], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    return new Promise((resolve, reject) => {
      this.child!.once('exit', (code, signal) => {
        // A web that dies mid-run ends the run with the reason, not with an unhandled IPC error.
        this.gone = new Error(`the scale web exited (${signal ? `signal ${signal}` : `code ${code}`})`);
        for (const { reject: fail } of this.pending.values()) fail(this.gone);
        this.pending.clear();
        reject(this.gone);
      });
      this.child!.on('message', (message: ScaleServerMessage) => {
        if (message.type === 'ready') {
          this.port = message.port;
          this.addresses = message.addresses;
          this.hostsLines = message.hostsFile;
          resolve();
        } else {
          this.pending.get(message.id)?.resolve(message);
          this.pending.delete(message.id);
        }
      });
    });
  }
}
