import { BlockList, isIP } from 'node:net';

/**
 * Addresses a crawler must not reach unless told to: they lead into the crawler's own network (SSRF)
 * rather than to the public web.
 */
const NON_PUBLIC_V4: [string, number][] = [
  ['0.0.0.0', 8], // "this" network, unspecified
  ['10.0.0.0', 8], // private
  ['100.64.0.0', 10], // carrier-grade NAT
  ['127.0.0.0', 8], // loopback
  ['169.254.0.0', 16], // link-local, cloud metadata (169.254.169.254)
  ['172.16.0.0', 12], // private
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.168.0.0', 16], // private
  ['198.18.0.0', 15], // benchmarking
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, broadcast
];
const NON_PUBLIC_V6: [string, number][] = [
  ['::', 128], // unspecified
  ['::1', 128], // loopback
  ['fc00::', 7], // unique local
  ['fe80::', 10], // link-local
  ['ff00::', 8], // multicast
  ['64:ff9b:1::', 48], // local-use NAT64
];

const blocked = new BlockList();
for (const [net, prefix] of NON_PUBLIC_V4) blocked.addSubnet(net, prefix, 'ipv4');
for (const [net, prefix] of NON_PUBLIC_V6) blocked.addSubnet(net, prefix, 'ipv6');

/** True when the address is loopback, private, link-local, multicast, unspecified or otherwise not public. */
export function isNonPublicAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 0) throw new Error(`not an IP address: ${address}`);
  if (family === 6) {
    // IPv4-mapped (::ffff:a.b.c.d) addresses are judged by their IPv4 part.
    const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
    if (mapped) return blocked.check(mapped[1], 'ipv4');
    return blocked.check(address, 'ipv6');
  }
  return blocked.check(address, 'ipv4');
}

export interface AddressPolicyOptions {
  /** Allow every address. */
  allowPrivate?: boolean;
  /** Non-public addresses inside these CIDRs (`ADDRESS/PREFIX`) are allowed. */
  allowCidrs?: readonly string[];
}

/**
 * Which resolved or literal addresses the crawler may connect to: public ones, plus the non-public ones an
 * operator allowed (all of them, or those inside listed CIDRs). Judged on every answer, so a name that
 * starts resolving to an inside address (DNS rebinding) is refused from that answer on.
 */
export class AddressPolicy {
  private readonly allowed = new BlockList();

  constructor(private readonly options: AddressPolicyOptions = {}) {
    for (const cidr of options.allowCidrs ?? []) {
      const [net, prefix] = cidr.split('/');
      const family = isIP(net);
      if (family === 0 || !/^\d+$/.test(prefix ?? '')) throw new Error(`not a CIDR: ${cidr}`);
      this.allowed.addSubnet(net, Number(prefix), family === 4 ? 'ipv4' : 'ipv6');
    }
  }

  /** Undefined when the address may be reached, else why not. */
  refusal(address: string): string | undefined {
    if (this.options.allowPrivate || !isNonPublicAddress(address)) return undefined;
    // BlockList judges IPv4-mapped IPv6 addresses (::ffff:a.b.c.d) by their IPv4 rules too.
    if (this.allowed.check(address, isIP(address) === 4 ? 'ipv4' : 'ipv6')) return undefined;
    return `address ${address} is not public (allow with DNS_ALLOW_PRIVATE / --allow-private, or DNS_ALLOW_CIDRS)`;
  }
}
