import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Prng } from './prng';

/**
 * A web with a topic planted far from the seeds, for the focused crawl: hosts `h<i>.planted.test` on a
 * ring, each linking mostly to its own pages and its ring neighbours (and now and then to any host), so a
 * breadth-first crawl spreads outwards host by host. Clusters of topic hosts sit half-way round the ring
 * from h0; their pages carry the topic's words and link mostly within their cluster, and their ring
 * neighbours mention a topic word now and then (a scent, as real sites near a topic have). One server on
 * 127.0.0.1 answers for every host.
 */
export interface PlantedWebOptions {
  /** Hosts on the ring. @defaultValue 60 */
  hosts?: number;
  /** Pages per host. @defaultValue 20 */
  pagesPerHost?: number;
  /** Links per page. @defaultValue 8 */
  linksPerPage?: number;
  /** Topic clusters. @defaultValue 2 */
  clusters?: number;
  /** Hosts per cluster. @defaultValue 3 */
  clusterSize?: number;
  /** Share of off-host links that go to any host rather than a ring neighbour. @defaultValue 0.03 */
  longLinks?: number;
  /** Hosts this close to a cluster (on the ring) mention one topic word on some pages, fewer the farther. @defaultValue 4 */
  gradient?: number;
  /** Seed hosts, spread evenly round the ring from h0 (and never in a cluster). @defaultValue 1 */
  seedHosts?: number;
  /** PRNG seed: the same seed, the same web. @defaultValue 1 */
  seed?: number;
}

/** The planted topic's words: a relevant page has all of them. */
export const TOPIC_TERMS = ['orchid', 'pollination', 'greenhouse'];
const FILLER = ['harbour', 'ledger', 'granite', 'violin', 'compass', 'lantern', 'meadow', 'copper', 'thimble', 'saddle', 'quartz', 'ferry'];

export class PlantedWeb {
  private readonly topic = new Set<number>();
  private constructor(
    private readonly server: http.Server,
    readonly port: number,
    readonly options: Required<PlantedWebOptions>,
    topicHosts: number[],
  ) {
    for (const h of topicHosts) this.topic.add(h);
  }

  static async start(options: PlantedWebOptions = {}): Promise<PlantedWeb> {
    const o: Required<PlantedWebOptions> = {
      hosts: 60,
      pagesPerHost: 20,
      linksPerPage: 8,
      clusters: 2,
      clusterSize: 3,
      longLinks: 0.03,
      gradient: 4,
      seedHosts: 1,
      seed: 1,
      ...options,
    };
    const topicHosts = plantedHosts(o);
    let web!: PlantedWeb;
    const server = http.createServer((req, res) => web.serve(req, res));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    web = new PlantedWeb(server, (server.address() as AddressInfo).port, o, topicHosts);
    return web;
  }

  host(i: number): string {
    return `h${i}.planted.test`;
  }

  seeds(): string[] {
    const { hosts, seedHosts } = this.options;
    const seeds = new Set<number>();
    for (let k = 0; k < seedHosts; k++) {
      let h = Math.floor((k * hosts) / seedHosts);
      while (this.topic.has(h)) h = (h + 1) % hosts;
      seeds.add(h);
    }
    return [...seeds].map((h) => `http://${this.host(h)}:${this.port}/`);
  }

  hostsFile(): string {
    return `${Array.from({ length: this.options.hosts }, (_, i) => `127.0.0.1 ${this.host(i)}`).join('\n')}\n`;
  }

  /** Whether the page at this URL is on the topic (every page of a topic host). */
  isRelevant(url: string): boolean {
    const match = /^h(\d+)\.planted\.test$/.exec(new URL(url).hostname);
    return match !== null && this.topic.has(Number(match[1]));
  }

  /** Relevant pages in the whole web. */
  relevantPages(): number {
    return this.topic.size * this.options.pagesPerHost;
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  private serve(req: http.IncomingMessage, res: http.ServerResponse) {
    const hostMatch = /^h(\d+)\.planted\.test/.exec(req.headers.host ?? '');
    const path = req.url ?? '/';
    if (!hostMatch || Number(hostMatch[1]) >= this.options.hosts) return void res.writeHead(404).end();
    if (path === '/robots.txt') return void res.writeHead(200, { 'content-type': 'text/plain' }).end('User-agent: *\nAllow: /\n');
    const pageMatch = /^\/(?:p\/(\d+))?$/.exec(path);
    const page = pageMatch ? Number(pageMatch[1] ?? 0) : -1;
    if (page < 0 || page >= this.options.pagesPerHost) return void res.writeHead(404).end();
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(this.html(Number(hostMatch[1]), page));
  }

  /** Ring distance from the host to the nearest topic host. */
  private distanceToTopic(host: number): number {
    let best = Infinity;
    for (const t of this.topic) {
      const d = Math.abs(t - host);
      best = Math.min(best, d, this.options.hosts - d);
    }
    return best;
  }

  private html(host: number, page: number): string {
    const o = this.options;
    const prng = new Prng(o.seed * 1_000_003 + host * 1009 + page);
    const random = () => prng.next();
    const onTopic = this.topic.has(host);
    const words = Array.from({ length: 40 }, () => FILLER[Math.floor(random() * FILLER.length)]);
    if (onTopic) for (const term of TOPIC_TERMS) words.splice(Math.floor(random() * words.length), 0, term);
    // Topical locality: near a cluster some pages mention one of the topic's words (never enough to be
    // relevant), the fewer the farther.
    const distance = this.distanceToTopic(host);
    if (!onTopic && distance <= o.gradient && random() < 1 - distance / (o.gradient + 1))
      words.splice(Math.floor(random() * words.length), 0, TOPIC_TERMS[Math.floor(random() * TOPIC_TERMS.length)]);
    const links: string[] = [];
    for (let i = 0; i < o.linksPerPage; i++) {
      const r = random();
      let target = host;
      if (r < 0.35) {
        // Off-host: topic hosts mostly within their cluster, every host a little along the ring.
        const cluster = onTopic ? [...this.topic].filter((h) => Math.abs(h - host) < o.clusterSize * 2) : [];
        if (cluster.length > 1 && random() < 0.7) target = cluster[Math.floor(random() * cluster.length)];
        // A few long links (a small world): the topic can be reached from anywhere, but rarely.
        else if (random() < o.longLinks) target = Math.floor(random() * o.hosts);
        else target = (host + o.hosts + (random() < 0.5 ? -1 : 1) * (1 + Math.floor(random() * 2))) % o.hosts;
      }
      const targetPage = Math.floor(random() * o.pagesPerHost);
      links.push(`<a href="http://${this.host(target)}:${this.port}/p/${targetPage}">link ${i}</a>`);
    }
    return `<!doctype html><html><head><title>${onTopic ? 'Orchid notes' : 'Notes'} ${host}.${page}</title></head><body><p>${words.join(' ')}</p>${links.join(' ')}</body></html>`;
  }
}

/** The topic hosts: `clusters` runs of `clusterSize` neighbours, spread over the half of the ring opposite h0. */
function plantedHosts(o: Required<PlantedWebOptions>): number[] {
  const hosts: number[] = [];
  for (let c = 0; c < o.clusters; c++) {
    const start = Math.floor(o.hosts / 4 + ((c + 0.5) * o.hosts) / 2 / o.clusters - o.clusterSize / 2);
    for (let i = 0; i < o.clusterSize; i++) hosts.push(start + i);
  }
  return hosts;
}
