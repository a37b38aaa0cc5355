import { BlockList, isIP } from 'node:net';
import type { FrontierStoreOptions } from './frontier-store';

/**
 * How an address's allowance grows when the options do not say (FRONTIER_PER_IP_DOMAINS_PER_STEP,
 * FRONTIER_PER_IP_MAX_SCALE): up to 20 domains, the base rule (8 in flight, 100 ms apart); 16 times that at most.
 */
export const PER_IP_GROWTH = { domainsPerStep: 20, maxScale: 16 } as const;

/** How the configured ranges class an address: `cdn` (no per-IP limit), `strict` (never grown) or '' (by its domains). */
export type IpRangeRule = '' | 'cdn' | 'strict';

/**
 * The per-IP rule: an address serving d distinct registrable domains may take ⌈d / domainsPerStep⌉ (at most
 * maxScale) times the base allowance — that many times FRONTIER_PER_IP_LIMIT in flight, and the interval
 * divided by it. A shared server of a few sites keeps the base rule; a CDN edge serving thousands grows to the
 * cap. Domains, not hosts: made-up subdomains of one site (wildcard DNS) add nothing. Both drivers use it (the
 * Redis one passes the range rule and these numbers to its scripts, which compute the same).
 */
export class PerIpAllowance {
  readonly domainsPerStep: number;
  readonly maxScale: number;
  private readonly cdn = new BlockList();
  private readonly strict = new BlockList();
  private readonly anyRange: boolean;

  constructor(options: Pick<FrontierStoreOptions, 'perIpDomainsPerStep' | 'perIpMaxScale' | 'perIpCdnCidrs' | 'perIpStrictCidrs'>) {
    this.domainsPerStep = Math.max(1, options.perIpDomainsPerStep ?? PER_IP_GROWTH.domainsPerStep);
    this.maxScale = Math.max(1, options.perIpMaxScale ?? PER_IP_GROWTH.maxScale);
    for (const cidr of options.perIpCdnCidrs ?? []) addCidr(this.cdn, cidr);
    for (const cidr of options.perIpStrictCidrs ?? []) addCidr(this.strict, cidr);
    this.anyRange = (options.perIpCdnCidrs?.length ?? 0) + (options.perIpStrictCidrs?.length ?? 0) > 0;
  }

  /** Distinct domains worth remembering per address: more cannot grow its allowance further. */
  get domainsKept(): number {
    return this.domainsPerStep * this.maxScale;
  }

  rangeRule(ip: string): IpRangeRule {
    if (!this.anyRange) return '';
    const family = isIP(ip) === 6 ? 'ipv6' : 'ipv4';
    if (this.strict.check(ip, family)) return 'strict';
    return this.cdn.check(ip, family) ? 'cdn' : '';
  }

  /** The multiplier of the base allowance for an address of `domains` distinct domains (Infinity: no per-IP limit). */
  scale(domains: number, rule: IpRangeRule): number {
    if (rule === 'cdn') return Infinity;
    if (rule === 'strict') return 1;
    return Math.min(this.maxScale, Math.max(1, Math.ceil(domains / this.domainsPerStep)));
  }
}

function addCidr(list: BlockList, cidr: string): void {
  const [address, prefix] = cidr.split('/');
  list.addSubnet(address, Number(prefix), isIP(address) === 6 ? 'ipv6' : 'ipv4');
}
