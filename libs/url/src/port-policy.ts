/**
 * Which ports the crawler may send HTTP to. A link can name any port (`http://host:6379/`), and the
 * request line and headers of a GET are enough to make many plain-text services act (Redis, SMTP, memcached
 * take each line as a command), so the port is judged before any request: seeds, links, redirect targets,
 * and again by the downloader.
 */

/**
 * The Fetch standard's "bad ports" (https://fetch.spec.whatwg.org/#bad-port), which browsers never connect
 * to, plus 0 (no service listens there). Refused whatever the settings say.
 */
export const FETCH_BAD_PORTS: ReadonlySet<number> = new Set([
  0, 1, 7, 9, 11, 13, 15, 17, 19, 20, 21, 22, 23, 25, 37, 42, 43, 53, 69, 77, 79, 87, 95, 101, 102, 103, 104, 109, 110, 111, 113, 115, 117, 119, 123, 135, 137, 139, 143,
  161, 179, 389, 427, 465, 512, 513, 514, 515, 526, 530, 531, 532, 540, 548, 554, 556, 563, 587, 601, 636, 989, 990, 993, 995, 1719, 1720, 1723, 2049, 3659, 4045, 4190,
  5060, 5061, 6000, 6566, 6665, 6666, 6667, 6668, 6669, 6679, 6697, 10080,
]);

/**
 * Ports of infrastructure a crawler usually runs next to (its own Redis and object store among them) that
 * the Fetch list leaves out because they sit in the range ordinary web servers use too: always blocked
 * (a configured block list adds to it, never replaces it), unless the port is named alone in the allowlist.
 */
export const DEFAULT_BLOCKED_PORTS: readonly number[] = Object.freeze([
  1433, // SQL Server
  1521, // Oracle
  2181, // ZooKeeper
  2375,
  2376, // Docker API
  2379,
  2380, // etcd
  3306, // MySQL
  3389, // RDP
  4222, // NATS
  4646, // Nomad
  5432, // PostgreSQL
  5672, // AMQP (RabbitMQ)
  5984, // CouchDB
  5985,
  5986, // WinRM
  6379,
  6380, // Redis (a second instance, or its TLS port)
  6443, // Kubernetes API
  8086, // InfluxDB
  8200, // Vault
  8500, // Consul
  9000,
  9001, // MinIO API and console
  9042, // Cassandra
  9092, // Kafka
  9200,
  9300, // Elasticsearch
  10250,
  10255, // kubelet
  11211, // memcached
  15672, // RabbitMQ management
  26379, // Redis Sentinel
  27017, // MongoDB
]);

/** Ordinary web ports, and every unprivileged one: below 1024 a web server is nearly always on 80 or 443. */
export const DEFAULT_ALLOWED_PORTS: readonly string[] = Object.freeze(['80', '443', '1024-65535']);

export interface PortPolicyOptions {
  /** Ports and ranges (`8000-8999`) that may be fetched. @defaultValue DEFAULT_ALLOWED_PORTS */
  allowed?: readonly string[];
  /** Ports refused although allowed, on top of DEFAULT_BLOCKED_PORTS, unless named alone in `allowed`. @defaultValue none */
  blocked?: readonly string[];
  /**
   * The ports of the crawler's own services and infrastructure (its Redis nodes, S3, PostgreSQL, its HTTP port),
   * refused like the block list: what a page could reach when private addresses are allowed is first of all these.
   */
  own?: readonly number[];
}

interface PortRange {
  from: number;
  to: number;
}

/** `N` or `N-M`, 1 ≤ N ≤ M ≤ 65535; undefined when the entry is not one. */
export function parsePortRange(entry: string): PortRange | undefined {
  const match = /^\s*(\d{1,5})\s*(?:-\s*(\d{1,5})\s*)?$/.exec(entry);
  if (!match) return undefined;
  const from = Number(match[1]);
  const to = Number(match[2] ?? match[1]);
  return from >= 1 && from <= to && to <= 65535 ? { from, to } : undefined;
}

/** The port a request to this URL goes to: the explicit one, else the scheme's default. */
export function portOf(url: URL): number {
  if (url.port !== '') return Number(url.port);
  return url.protocol === 'https:' ? 443 : 80;
}

/**
 * A port is fetched when it is not a Fetch bad port, lies in an allowed range, and is neither on the block
 * list nor one of the crawler's own, unless the allowlist names it alone
 * (`URL_FILTER_ALLOWED_PORTS=80,443,1024-65535,9000` opens 9000 and keeps the rest blocked). No setting
 * empties the block list: opening an infrastructure port takes naming that port.
 */
export class PortPolicy {
  private readonly allowed: PortRange[];
  private readonly named = new Set<number>();
  private readonly blocked: ReadonlySet<number>;
  private readonly own: ReadonlySet<number>;

  constructor(options: PortPolicyOptions = {}) {
    this.allowed = (options.allowed ?? DEFAULT_ALLOWED_PORTS).map((entry) => {
      const range = parsePortRange(entry);
      if (!range) throw new Error(`not a port or port range: ${JSON.stringify(entry)}`);
      if (range.from === range.to) this.named.add(range.from);
      return range;
    });
    this.blocked = new Set([
      ...DEFAULT_BLOCKED_PORTS,
      ...(options.blocked ?? []).flatMap((entry) => {
        const range = parsePortRange(entry);
        if (!range) throw new Error(`not a port or port range: ${JSON.stringify(entry)}`);
        return Array.from({ length: range.to - range.from + 1 }, (_, i) => range.from + i);
      }),
    ]);
    this.own = new Set(options.own ?? []);
  }

  /** Undefined when a request to this URL's port may be made, else why not. */
  refusal(url: URL): string | undefined {
    const port = portOf(url);
    if (FETCH_BAD_PORTS.has(port)) return `port ${port} is one the Fetch standard never lets HTTP reach`;
    if (!this.allowed.some(({ from, to }) => port >= from && port <= to)) return `port ${port} is not in URL_FILTER_ALLOWED_PORTS`;
    if (this.blocked.has(port) && !this.named.has(port))
      return `port ${port} is in URL_FILTER_BLOCKED_PORTS (an infrastructure port; name it alone in URL_FILTER_ALLOWED_PORTS to allow it)`;
    if (this.own.has(port) && !this.named.has(port))
      return `port ${port} is one of the crawler's own (REDIS_URL, S3_URL, RECORDS_URL or PORT; name it alone in URL_FILTER_ALLOWED_PORTS to allow it)`;
    return undefined;
  }
}
