/**
 * The scale benchmark's web (`npm run bench:scale`): a million pages and more over ten thousand hosts and
 * more, none of it held in memory. Every reply is built when asked, from a PRNG seeded by (seed, host, page),
 * so that the same URL always answers the same bytes and the server's memory does not grow with the web.
 *
 * Pages are shaped like the benchmark web's (bench/web/real-page.ts, its link mix from bench-web.ts), with one
 * addition that makes the set of reachable pages exact: page p of a host links to pages 2p+1 and 2p+2 (a
 * binary tree from the home page), so every page of every host is reachable from the hosts' home pages,
 * whatever the random links chose. Those seeds reach exactly `hosts × pagesPerHost` pages.
 *
 * Addresses are laid out as on the real web: most hosts (`sharedPerMille`, 80% by default) sit behind a few
 * shared addresses (127.2.0.1 … 127.2.0.`sharedAddresses`, like a CDN or a shared host), the rest each have
 * one of their own (127.1.x.y).
 *
 * Paths of a host, as the benchmark web's:
 *   /robots.txt     200 (`Disallow: /private/`, `Crawl-delay: 1` on the first `crawlDelayHosts` hosts), or 404 on one host in twenty
 *   /, /p/1 … /p/{n-1}  pages (200, text/html)
 *   /d/N            byte-identical copy of /p/N        (an exact duplicate)
 *   /r/N            301 → /p/N                          (a redirect)
 *   /missing/N      404
 *   /err/N          500
 *   /private/N      a page robots.txt disallows (fetching it is a robots violation)
 */
import { Prng } from '../../test/web/prng';
import { mixedLinks, paragraphPool, titleWords, type BenchReply } from './bench-web';
import { realPageBytes, renderRealPage } from './real-page';

export interface ScaleWebOptions {
  hosts: number;
  /** Pages per host, the home page included (at least 2). */
  pagesPerHost: number;
  seed: number;
  /** Port the server listens on, on every address (cross-host links are absolute, so they name it). */
  port: number;
  /** Median page size, KB. @defaultValue 30 */
  pageKb?: number;
  /** Hosts behind the shared addresses, per mille. @defaultValue 800 */
  sharedPerMille?: number;
  /** Shared addresses (127.2.0.1 …). @defaultValue 4 */
  sharedAddresses?: number;
  /** Hosts whose robots.txt says `Crawl-delay: 1` (the first ones). @defaultValue 0 */
  crawlDelayHosts?: number;
}

/** Kinds of same-host path the web answers, each numbered by page: the observer keeps one bit per (kind, host, page). */
export const PATH_KINDS = ['p', 'd', 'r', 'missing', 'err', 'private'] as const;
export type PathKind = (typeof PATH_KINDS)[number];

export interface ParsedPath {
  kind: PathKind;
  page: number;
}

const HTML = 'text/html; charset=utf-8';
const OWN_PER_OCTET = 250;

export class ScaleWeb {
  readonly hosts: number;
  readonly pagesPerHost: number;
  readonly port: number;
  private readonly seed: number;
  private readonly medianBytes: number;
  private readonly sharedPerMille: number;
  private readonly sharedAddresses: number;
  private readonly crawlDelayHosts: number;
  private readonly nameWidth: number;
  private readonly paragraphs: Buffer[];

  constructor(options: ScaleWebOptions) {
    if (options.pagesPerHost < 2) throw new RangeError('ScaleWeb: pagesPerHost must be at least 2');
    this.hosts = options.hosts;
    this.pagesPerHost = options.pagesPerHost;
    this.port = options.port;
    this.seed = options.seed;
    this.medianBytes = (options.pageKb ?? 30) * 1024;
    this.sharedPerMille = options.sharedPerMille ?? 800;
    this.sharedAddresses = options.sharedAddresses ?? 4;
    this.crawlDelayHosts = options.crawlDelayHosts ?? 0;
    this.nameWidth = Math.max(5, String(options.hosts).length);
    this.paragraphs = paragraphPool(new Prng(options.seed ^ 0x5bd1e995));
    if (this.ownHosts() > 256 * OWN_PER_OCTET) throw new RangeError(`ScaleWeb: ${this.ownHosts()} hosts with an address of their own is more than 127.1.0.0/16 holds`);
  }

  /** Reachable pages: every page of every host. */
  get pages(): number {
    return this.hosts * this.pagesPerHost;
  }

  name(h: number): string {
    return `site-${String(h + 1).padStart(this.nameWidth, '0')}.test`;
  }

  /** The host's index, or -1 for a name not of this web. */
  hostIndex(name: string): number {
    const match = /^site-(\d+)\.test$/.exec(name);
    const h = match ? Number(match[1]) - 1 : -1;
    return h >= 0 && h < this.hosts ? h : -1;
  }

  /** Whether host h sits behind a shared address: spread evenly, exactly ⌊hosts × ‰ / 1000⌋ of them. */
  isShared(h: number): boolean {
    return Math.floor(((h + 1) * this.sharedPerMille) / 1000) > Math.floor((h * this.sharedPerMille) / 1000);
  }

  /** Index of host h's address: 0 … sharedAddresses-1 the shared ones, then one per own-address host. */
  addressIndex(h: number): number {
    if (this.isShared(h)) return h % this.sharedAddresses;
    return this.sharedAddresses + (h - Math.floor((h * this.sharedPerMille) / 1000));
  }

  get addressCount(): number {
    return this.sharedAddresses + this.ownHosts();
  }

  address(index: number): string {
    if (index < this.sharedAddresses) return `127.2.0.${index + 1}`;
    const own = index - this.sharedAddresses;
    return `127.1.${Math.floor(own / OWN_PER_OCTET)}.${(own % OWN_PER_OCTET) + 1}`;
  }

  /** Every address the web listens on. */
  addresses(): string[] {
    return Array.from({ length: this.addressCount }, (_, i) => this.address(i));
  }

  /** Crawl-delay of host h's robots.txt, seconds (0: none). */
  crawlDelay(h: number): number {
    return h < this.crawlDelayHosts ? 1 : 0;
  }

  robotsFound(h: number): boolean {
    return this.crawlDelay(h) > 0 || h % 20 !== 19;
  }

  seeds(): string[] {
    return Array.from({ length: this.hosts }, (_, h) => `http://${this.name(h)}:${this.port}/`);
  }

  /** hosts(5) lines: every host name on its address. */
  hostsFile(): string {
    const lines: string[] = [];
    for (let h = 0; h < this.hosts; h++) lines.push(`${this.address(this.addressIndex(h))} ${this.name(h)}`);
    return `${lines.join('\n')}\n`;
  }

  /** A path of the web's own (query and fragment already cut off), or null. */
  parse(path: string): ParsedPath | null {
    if (path === '/') return { kind: 'p', page: 0 };
    const match = /^\/(p|d|r|missing|err|private)\/(\d+)$/.exec(path);
    if (!match) return null;
    const page = Number(match[2]);
    return page < this.pagesPerHost ? { kind: match[1] as PathKind, page } : null;
  }

  /** Whether host h's robots.txt disallows the path. */
  disallowed(h: number, path: string): boolean {
    return this.robotsFound(h) && path.startsWith('/private/');
  }

  reply(h: number, path: string): BenchReply | undefined {
    if (path === '/robots.txt') return this.robots(h);
    const parsed = this.parse(path);
    if (!parsed) return undefined;
    const { kind, page } = parsed;
    const name = this.name(h);
    switch (kind) {
      case 'p':
      case 'd':
        return { status: 200, contentType: HTML, body: this.page(h, page) };
      case 'r':
        return { status: 301, contentType: HTML, body: Buffer.from('<!doctype html><title>Moved</title>'), location: `/p/${page}` };
      case 'missing':
        return { status: 404, contentType: HTML, body: Buffer.from(`<!doctype html><title>Not found</title><p>${path} on ${name}</p>`) };
      case 'err':
        return { status: 500, contentType: HTML, body: Buffer.from(`<!doctype html><title>Server error</title><p>${path} on ${name}</p>`) };
      case 'private':
        return { status: 200, contentType: HTML, body: Buffer.from(`<!doctype html><title>Private</title><p>${path} on ${name}</p>`) };
    }
  }

  /** The page's links that make every page reachable: its children in the host's binary tree. */
  treeLinks(page: number): string[] {
    return [2 * page + 1, 2 * page + 2].filter((child) => child < this.pagesPerHost).map((child) => `/p/${child}`);
  }

  private robots(h: number): BenchReply {
    if (!this.robotsFound(h)) return { status: 404, contentType: 'text/plain', body: Buffer.from('Not found') };
    const lines = ['User-agent: *', 'Disallow: /private/'];
    if (this.crawlDelay(h)) lines.push(`Crawl-delay: ${this.crawlDelay(h)}`);
    lines.push('', 'User-agent: BadBot', 'Disallow: /');
    return { status: 200, contentType: 'text/plain', body: Buffer.from(`${lines.join('\n')}\n`) };
  }

  private page(h: number, page: number): Buffer {
    const rng = new Prng(pageSeed(this.seed, h, page));
    const name = this.name(h);
    const title = `${name} page ${page}: ${titleWords(rng)}`;
    const crossHost = (p: number) => `http://${this.name(rng.int(0, this.hosts - 1))}:${this.port}/p/${p}`;
    const links = [...this.treeLinks(page), ...mixedLinks(rng, this.pagesPerHost, crossHost)];
    return renderRealPage({
      host: name,
      port: this.port,
      path: page === 0 ? '/' : `/p/${page}`,
      title,
      pagesPerHost: this.pagesPerHost,
      links,
      otherHost: this.name(rng.int(0, this.hosts - 1)),
      targetBytes: realPageBytes(rng, this.medianBytes),
      rng,
      paragraphs: this.paragraphs,
    });
  }

  private ownHosts(): number {
    return this.hosts - Math.floor((this.hosts * this.sharedPerMille) / 1000);
  }
}

/** A 32-bit seed from (seed, host, page), well mixed (murmur3's finaliser), so that neighbouring pages differ. */
function pageSeed(seed: number, h: number, page: number): number {
  let x = Math.imul(seed ^ 0x9e3779b9, 0x85ebca6b) ^ Math.imul(h + 1, 0xc2b2ae35) ^ Math.imul(page + 1, 0x27d4eb2f);
  x ^= x >>> 16;
  x = Math.imul(x, 0x85ebca6b);
  x ^= x >>> 13;
  x = Math.imul(x, 0xc2b2ae35);
  x ^= x >>> 16;
  return x >>> 0;
}
