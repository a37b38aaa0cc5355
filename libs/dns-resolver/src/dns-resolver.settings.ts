import { isIP } from 'node:net';
import { z } from 'zod';
import { bool, checkedList, int, isCidr, ms } from '@crawler/settings';

/** `IP`, `IP:PORT` or `[IPv6]:PORT`, as dns.Resolver#setServers takes them. */
function isDnsServer(text: string): boolean {
  const bracketed = /^\[([^\]]+)\](?::(\d{1,5}))?$/.exec(text);
  const v4 = /^([\d.]+)(?::(\d{1,5}))?$/.exec(text);
  const [ip, port] = bracketed ? [bracketed[1], bracketed[2]] : v4 ? [v4[1], v4[2]] : [text, undefined];
  const family = isIP(ip);
  return family !== 0 && (v4 ? family === 4 : family === 6) && (port === undefined || (+port >= 1 && +port <= 65535));
}

/** `config.dns`: static answers, caching, servers, which addresses may be reached (assembled by @crawler/config). */
export const dnsSettings = z.object({
  /**
   * Allow hosts that resolve to loopback, private, link-local… addresses; cloud metadata addresses
   * (169.254.169.254, fd00:ec2::254…) stay refused.
   * @defaultValue false
   */
  allowPrivate: bool.default(false).meta({ env: 'DNS_ALLOW_PRIVATE' }),
  /** Static answers, NAME=IP pairs separated by commas or whitespace. */
  hosts: z.record(z.string(), z.ipv4().or(z.ipv6())).default({}).meta({ env: 'DNS_HOSTS', read: 'pairs' }),
  /** A hosts(5)-format file of static answers; a name on several lines takes the first line's address. */
  hostsFile: z.string().optional().meta({ env: 'DNS_HOSTS_FILE' }),
  /**
   * The machine's own hosts file, answered before DNS as the operating system's resolver does (after `DNS_HOSTS`
   * and `DNS_HOSTS_FILE`); looked at again every `DNS_MIN_TTL_MS`; `off` = not read.
   * @defaultValue /etc/hosts
   */
  systemHostsFile: z.string().min(1).default('/etc/hosts').meta({ env: 'DNS_SYSTEM_HOSTS_FILE' }),
  /** Cached answers live at least this long whatever their TTL. @defaultValue 60000 */
  minTtlMs: ms.default(60_000).meta({ env: 'DNS_MIN_TTL_MS' }),
  /** …and at most this long. @defaultValue 3600000 */
  maxTtlMs: ms.default(3_600_000).meta({ env: 'DNS_MAX_TTL_MS' }),
  /** Failed lookups are cached this long. @defaultValue 30000 */
  failureTtlMs: ms.default(30_000).meta({ env: 'DNS_FAILURE_TTL_MS' }),
  /** Jobs resolved at once per process. @defaultValue 64 */
  concurrency: int(1).default(64).meta({ env: 'DNS_CONCURRENCY' }),
  /**
   * DNS servers asked instead of the system's, comma-separated `IP`, `IP:PORT` or `[IPv6]:PORT`; empty = the system
   * resolver.
   * @defaultValue []
   */
  servers: checkedList(isDnsServer, 'is not IP, IP:PORT or [IPv6]:PORT').default([]).meta({ env: 'DNS_SERVERS' }),
  /** Time a configured server is given to answer on the first try (later tries wait longer). @defaultValue 2000 */
  timeoutMs: int(1).default(2000).meta({ env: 'DNS_TIMEOUT_MS' }),
  /** Times each configured server is tried before a lookup fails. @defaultValue 2 */
  tries: int(1).max(10).default(2).meta({ env: 'DNS_TRIES' }),
  /**
   * A cached answer read in this last fraction of its TTL is refreshed in the background; 0 = never.
   * @defaultValue 0.2
   */
  refreshAheadRatio: z.coerce.number().min(0).lt(1).default(0.2).meta({ env: 'DNS_REFRESH_AHEAD_RATIO' }),
  /**
   * Non-public addresses allowed anyway, comma-separated CIDRs (e.g. 127.0.0.0/8,::1/128); a cloud metadata address
   * only when an entry names it alone (169.254.169.254/32).
   * @defaultValue []
   */
  allowCidrs: checkedList(isCidr, 'is not a CIDR (ADDRESS/PREFIX)').default([]).meta({ env: 'DNS_ALLOW_CIDRS' }),
});
