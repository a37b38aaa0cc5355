import { closeSync, fstatSync, openSync, promises as fs, readFileSync, Stats } from 'node:fs';
import { ConfigError } from '@crawler/config';
import type { Logger } from '@crawler/logging';
import { matchesDomain, normalizeDomain } from '@crawler/url';

export interface DomainListLine {
  /** 1-based line number. */
  line: number;
  text: string;
}

export interface ParsedDomainList {
  domains: Set<string>;
  /** Lines that name no domain (a URL, a path, a port…). */
  invalid: DomainListLine[];
}

/**
 * The blocklist format: one domain a line (`example.com`, also `*.example.com` or `.example.com`, which
 * mean the same: a domain always covers its subdomains), `#` starts a comment, blank lines are ignored.
 */
export function parseDomainList(text: string): ParsedDomainList {
  const domains = new Set<string>();
  const invalid: DomainListLine[] = [];
  text.split(/\r?\n/).forEach((raw, i) => {
    const entry = raw.replace(/#.*/, '').trim();
    if (entry === '') return;
    const domain = normalizeDomain(entry);
    if (domain === null) invalid.push({ line: i + 1, text: entry });
    else domains.add(domain);
  });
  return { domains, invalid };
}

const describeInvalid = (invalid: DomainListLine[]) =>
  invalid
    .slice(0, 5)
    .map((l) => `line ${l.line} ${JSON.stringify(l.text)}`)
    .join(', ') + (invalid.length > 5 ? ` and ${invalid.length - 5} more` : '');

/** Which version of the file was read: a replaced (renamed over), resized or touched file is a new one. */
const versionOf = (stats: Stats) => `${stats.dev}:${stats.ino}:${stats.size}:${stats.mtimeMs}`;

/**
 * The domain blocklist file: read at start, where an unreadable file or a bad line stops
 * the service with an error naming URL_FILTER_BLOCKLIST_FILE; then checked every `reloadMs` and, when its
 * inode, size or modification time changed, read again and swapped in whole. A file that has become
 * unreadable or has a bad line keeps the previous list, with a warning (once per distinct problem), so
 * an editing mistake never unblocks everything. Replace the file atomically (write, then rename) so a
 * half-written file is never read.
 */
export class DomainBlocklist {
  private domains: ReadonlySet<string> = new Set();
  private version: string | undefined;
  private timer: NodeJS.Timeout | undefined;
  private checking: Promise<boolean> | undefined;
  private lastProblem: string | undefined;

  constructor(
    readonly file: string,
    private readonly reloadMs: number,
    private readonly logger: Logger,
  ) {}

  /** Reads the file now, synchronously (boot). @throws ConfigError naming URL_FILTER_BLOCKLIST_FILE */
  load(): void {
    let text: string;
    let version: string;
    try {
      const fd = openSync(this.file, 'r');
      try {
        version = versionOf(fstatSync(fd));
        text = readFileSync(fd, 'utf8');
      } finally {
        closeSync(fd);
      }
    } catch (error) {
      throw new ConfigError([`URL_FILTER_BLOCKLIST_FILE: cannot read ${this.file}: ${(error as Error).message}`]);
    }
    const { domains, invalid } = parseDomainList(text);
    if (invalid.length) {
      throw new ConfigError([`URL_FILTER_BLOCKLIST_FILE: ${this.file} has lines that are not domain names: ${describeInvalid(invalid)}`]);
    }
    this.swap(domains, version);
  }

  /** Whether `hostname` is a blocked domain or a subdomain of one. */
  blocks(hostname: string): boolean {
    return matchesDomain(hostname, this.domains);
  }

  get size(): number {
    return this.domains.size;
  }

  /** Starts checking the file every `reloadMs` (the timer keeps no process alive). */
  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => void this.reload(), this.reloadMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  /**
   * Reads the file again if it changed since the last read; answers whether a new list is in force.
   * Never throws: a problem is logged and the previous list stays. Concurrent calls share one check.
   */
  reload(): Promise<boolean> {
    this.checking ??= this.check().finally(() => (this.checking = undefined));
    return this.checking;
  }

  private async check(): Promise<boolean> {
    let handle: fs.FileHandle | undefined;
    try {
      handle = await fs.open(this.file, 'r');
      const version = versionOf(await handle.stat());
      if (version === this.version) return false;
      const { domains, invalid } = parseDomainList(await handle.readFile('utf8'));
      if (invalid.length) {
        this.problem(`has lines that are not domain names: ${describeInvalid(invalid)}`);
        return false;
      }
      this.swap(domains, version);
      return true;
    } catch (error) {
      this.problem(`cannot be read: ${(error as Error).message}`);
      return false;
    } finally {
      await handle?.close();
    }
  }

  private swap(domains: ReadonlySet<string>, version: string): void {
    this.domains = domains;
    this.version = version;
    this.lastProblem = undefined;
    this.logger.info({ file: this.file, domains: domains.size }, 'domain blocklist loaded');
  }

  private problem(what: string): void {
    if (what === this.lastProblem) return;
    this.lastProblem = what;
    this.logger.warn(
      { file: this.file, domains: this.domains.size },
      `domain blocklist ${this.file} ${what}; the previous list (${this.domains.size} domains) stays in force`,
    );
  }
}
