import { readFileSync, statSync } from 'node:fs';
import { isIP } from 'node:net';

/**
 * The machine's hosts file (hosts(5), `/etc/hosts` on Unix), answered as the operating system's resolver
 * answers it: every program on the machine resolves those names, so the crawler does too. A name has every
 * address the file gives it, in the file's order, its IPv4 ones before its IPv6 ones (as getaddrinfo orders
 * them by default). The file is looked
 * at again once `recheckMs` has passed since the last look (the DNS cache's minimum TTL), and read again only
 * when it changed; a file that disappears answers nothing.
 */
export class SystemHostsFile {
  private answers = new Map<string, string[]>();
  private checkedAt = -Infinity;
  private version = '';

  constructor(
    private readonly path: string,
    private readonly recheckMs: number,
  ) {}

  /** The addresses the file gives the (lower-case) name, if any. */
  lookup(name: string): string[] | undefined {
    this.recheck();
    return this.answers.get(name);
  }

  private recheck(): void {
    const now = Date.now();
    if (now - this.checkedAt < this.recheckMs) return;
    this.checkedAt = now;
    let version: string;
    try {
      const stat = statSync(this.path);
      version = `${stat.mtimeMs}:${stat.size}:${stat.ino}`;
      if (version === this.version) return;
      this.answers = parseSystemHosts(readFileSync(this.path, 'utf8'));
    } catch {
      // No file (or an unreadable one) is a machine without static names, not a failure of the crawl.
      version = '';
      this.answers = new Map();
    }
    this.version = version;
  }
}

/** Name → its addresses, IPv4 ones before IPv6 ones, each once; lines that do not start with an IP are skipped. */
export function parseSystemHosts(text: string): Map<string, string[]> {
  const v4 = new Map<string, string[]>();
  const v6 = new Map<string, string[]>();
  for (const line of text.split('\n')) {
    const [address, ...names] = line.replace(/#.*/, '').trim().split(/\s+/);
    const family = isIP(address ?? '');
    if (family === 0) continue;
    const byFamily = family === 4 ? v4 : v6;
    for (const name of names) {
      const key = name.toLowerCase().replace(/\.$/, '');
      const known = byFamily.get(key) ?? [];
      if (!known.includes(address)) byFamily.set(key, [...known, address]);
    }
  }
  for (const [name, addresses] of v6) v4.set(name, [...(v4.get(name) ?? []), ...addresses]);
  return v4;
}
