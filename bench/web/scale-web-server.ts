/**
 * The scale web as a process of its own (forked by ScaleWebProcess), so that its CPU is not any crawler's.
 * It listens on one port on every address of the web, builds each reply when asked, and answers its
 * parent's messages: `observe` → the observer's figures, `lost` → the reachable pages never asked for.
 */
import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import { ScaleWeb } from './scale-web';
import { ScaleWebObserver, type ScaleObservation } from './scale-web-observer';

export interface ScaleWebServerOptions {
  hosts: number;
  pagesPerHost: number;
  seed: number;
  /** Median page size, KB. */
  pageKb: number;
  /** Hosts behind the shared addresses, per mille. */
  sharedPerMille: number;
  sharedAddresses: number;
  crawlDelayHosts: number;
  /** Each answer's think time, ms (uniform in [latency/2, 3·latency/2]), as in the benchmark web. */
  latencyMs: number;
  /** The per-host delay the crawler was given, ms: what the observer holds request starts to. */
  delayMs: number;
}

export type ScaleServerMessage =
  | { type: 'ready'; port: number; addresses: number; hostsFile: string }
  | { type: 'observation'; id: number; observation: ScaleObservation }
  | { type: 'lost'; id: number; lost: { count: number; urls: string[] } };
export type ScaleParentMessage = { type: 'observe'; id: number } | { type: 'lost'; id: number; limit: number };

const NOT_FOUND = Buffer.from('not found');

async function main() {
  const options = JSON.parse(process.argv[2] ?? '{}') as ScaleWebServerOptions;
  let web: ScaleWeb | undefined;
  let observer: ScaleWebObserver | undefined;

  const handle = (req: IncomingMessage, res: ServerResponse) => {
    const h = web!.hostIndex((req.headers.host ?? '').replace(/:\d+$/, ''));
    const url = req.url ?? '/';
    const q = url.search(/[?#]/);
    const path = q < 0 ? url : url.slice(0, q);
    const done = observer!.start(h, path, performance.now());
    const send = () => {
      const reply = (h >= 0 ? web!.reply(h, path) : undefined) ?? { status: 404, contentType: 'text/plain', body: NOT_FOUND };
      const headers: Record<string, string | number> = { 'content-type': reply.contentType, 'content-length': reply.body.length };
      if (reply.location) headers.location = reply.location;
      res.writeHead(reply.status, headers);
      res.end(reply.body, () => done(reply.status, reply.contentType, reply.body.length));
    };
    if (options.latencyMs > 0) setTimeout(send, options.latencyMs * (0.5 + Math.random()));
    else send();
  };

  // One port on every address: a free one on the first, then the same on the others.
  const layout = new ScaleWeb({ ...options, port: 0 });
  const addresses = layout.addresses();
  const listeners: Server[] = [];
  const port = await listen(createServer({ keepAliveTimeout: 30_000 }, handle), addresses[0], 0, listeners);
  for (const address of addresses.slice(1)) await listen(createServer({ keepAliveTimeout: 30_000 }, handle), address, port, listeners);
  web = new ScaleWeb({ ...options, port });
  observer = new ScaleWebObserver(web, { delayMs: options.delayMs });
  process.send!({ type: 'ready', port, addresses: addresses.length, hostsFile: web.hostsFile() } satisfies ScaleServerMessage);
  process.on('message', (message: ScaleParentMessage) => {
    if (message.type === 'observe') process.send!({ type: 'observation', id: message.id, observation: observer!.observation() } satisfies ScaleServerMessage);
    else if (message.type === 'lost') process.send!({ type: 'lost', id: message.id, lost: observer!.lost(message.limit) } satisfies ScaleServerMessage);
  });
  process.on('disconnect', () => process.exit(0));
}

function listen(server: Server, host: string, port: number, listeners: Server[]): Promise<number> {
  listeners.push(server);
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve((server.address() as { port: number }).port));
  });
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
