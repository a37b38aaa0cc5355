/**
 * The benchmark web as a process of its own (forked by BenchWebProcess), so that its CPU is not any
 * crawler's. It builds every page in memory, listens on each host's loopback address on one port, and
 * answers its parent's messages: `{ type: 'observe', reset? }` → the WebObserver's figures.
 */
import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import { BenchWeb, type BenchWebShape } from './bench-web';
import { WebObserver } from './web-observer';

export interface BenchWebServerOptions {
  hosts: number;
  pagesPerHost: number;
  seed: number;
  /**
   * Time each answer takes, ms (a real server's think time; uniform in [latency/2, 3·latency/2]). Without
   * it the server answers each request before reading the next, and two requests a crawler sent to one host
   * at once would never be seen overlapping.
   */
  latencyMs: number;
  shape: BenchWebShape;
  /** Median page size of the real shape, KB. */
  pageKb: number;
}

export type ServerMessage =
  | { type: 'ready'; port: number; hosts: { name: string; ip: string }[]; pageBytes: number; buildMs: number }
  | { type: 'observation'; id: number; observation: ReturnType<WebObserver['observation']> };
export type ParentMessage = { type: 'observe'; id: number; reset?: boolean };

async function main() {
  const options = JSON.parse(process.argv[2] ?? '{}') as BenchWebServerOptions;
  const started = performance.now();
  const listeners: Server[] = [];
  let web: BenchWeb | undefined;
  let observer: WebObserver | undefined;

  const handle = (req: IncomingMessage, res: ServerResponse) => {
    const host = (req.headers.host ?? '').replace(/:\d+$/, '');
    const url = req.url ?? '/';
    const q = url.search(/[?#]/);
    const path = q < 0 ? url : url.slice(0, q);
    const done = observer!.start(host, path, performance.now());
    const reply = web!.reply(host, path) ?? { status: 404, contentType: 'text/plain', body: NOT_FOUND };
    const headers: Record<string, string | number> = { 'content-type': reply.contentType, 'content-length': reply.body.length };
    if (reply.location) headers.location = reply.location;
    const send = () => {
      res.writeHead(reply.status, headers);
      res.end(reply.body, () => done(reply.status, reply.contentType, reply.body.length));
    };
    if (options.latencyMs > 0) setTimeout(send, options.latencyMs * (0.5 + Math.random()));
    else send();
  };

  // One port for every host: find a free one on the first address, then bind the same on the others.
  const first = createServer({ keepAliveTimeout: 30_000 }, handle);
  const hostIps = Array.from({ length: options.hosts }, (_, i) => `127.1.${Math.floor(i / 250)}.${(i % 250) + 1}`);
  const port = await listen(first, hostIps[0], 0);
  listeners.push(first);
  for (const ip of hostIps.slice(1)) {
    const server = createServer({ keepAliveTimeout: 30_000 }, handle);
    await listen(server, ip, port);
    listeners.push(server);
  }
  web = new BenchWeb({ hosts: options.hosts, pagesPerHost: options.pagesPerHost, seed: options.seed, port, shape: options.shape, pageKb: options.pageKb });
  observer = new WebObserver((h, p) => web!.disallowed(h, p));
  const ready: ServerMessage = {
    type: 'ready',
    port,
    hosts: web.hosts.map((h) => ({ name: h.name, ip: h.ip })),
    pageBytes: web.pageBytes,
    buildMs: Math.round(performance.now() - started),
  };
  process.send!(ready);
  process.on('message', (message: ParentMessage) => {
    if (message.type !== 'observe') return;
    const reply: ServerMessage = { type: 'observation', id: message.id, observation: observer!.observation() };
    if (message.reset) observer!.reset();
    process.send!(reply);
  });
  process.on('disconnect', () => process.exit(0));
}

const NOT_FOUND = Buffer.from('not found');

function listen(server: Server, host: string, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve((server.address() as { port: number }).port));
  });
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
