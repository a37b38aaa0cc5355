import { BlockList, isIP } from 'node:net';
import { embeddedIn, ipv6Groups } from './embedded-ipv4';

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
  ['64:ff9b:1::', 48], // local-use NAT64: its IPv4 part may sit anywhere, so the whole prefix is refused
  ['fc00::', 7], // unique local
  ['fe80::', 10], // link-local
  ['fec0::', 10], // site-local (deprecated, still routed inside some networks)
  ['ff00::', 8], // multicast
];

/**
 * Cloud instance metadata services: they hand out credentials to whoever asks from inside, so they stay
 * refused even where private addresses are allowed, unless named one by one (see AddressPolicy).
 */
export const METADATA_ADDRESSES: readonly string[] = [
  '169.254.169.254', // AWS, GCP, Azure, OpenStack, Oracle, DigitalOcean, Hetzner…
  '169.254.170.2', // AWS ECS task credentials
  '169.254.170.23', // AWS EKS Pod Identity agent
  '169.254.0.23', // Tencent Cloud
  '100.100.100.200', // Alibaba Cloud
  '192.0.0.192', // Oracle Cloud (older instances)
  'fd00:ec2::254', // AWS IMDS over IPv6
  'fd00:ec2::23', // AWS EKS Pod Identity agent over IPv6
  'fd20:ce::254', // GCP metadata over IPv6
];

const blocked = new BlockList();
for (const [net, prefix] of NON_PUBLIC_V4) blocked.addSubnet(net, prefix, 'ipv4');
for (const [net, prefix] of NON_PUBLIC_V6) blocked.addSubnet(net, prefix, 'ipv6');

const metadata = new Set(METADATA_ADDRESSES.map(normalised));

interface Part {
  address: string;
  family: 'ipv4' | 'ipv6';
  /** One spelling per address (see normalised). */
  key: string;
}

/**
 * The addresses to judge for one: itself, and for an IPv6 address that embeds IPv4 addresses (NAT64,
 * 6to4, Teredo, IPv4-mapped or -compatible) those too, since the packets may reach them.
 */
function judged(address: string): Part[] {
  const family = isIP(address);
  if (family === 0) throw new Error(`not an IP address: ${address}`);
  if (family === 4) return [{ address, family: 'ipv4', key: address }];
  const groups = ipv6Groups(address);
  const embedded = embeddedIn(groups)?.ipv4 ?? [];
  return [
    { address, family: 'ipv6', key: groups.map((group) => group.toString(16)).join(':') },
    ...embedded.map((ipv4) => ({ address: ipv4, family: 'ipv4' as const, key: ipv4 })),
  ];
}

/**
 * True when the address is loopback, private, link-local, multicast, unspecified or otherwise not public,
 * or is an IPv6 form that embeds such an IPv4 address.
 */
export function isNonPublicAddress(address: string): boolean {
  return judged(address).some((one) => blocked.check(one.address, one.family));
}

/** The cloud metadata address this address is or embeds, if any. */
export function metadataAddress(address: string): string | undefined {
  return metadataIn(judged(address))?.address;
}

function metadataIn(parts: Part[]): Part | undefined {
  return parts.find((one) => metadata.has(one.key));
}

export interface AddressPolicyOptions {
  /** Allow every address but the cloud metadata ones. */
  allowPrivate?: boolean;
  /**
   * Non-public addresses inside these CIDRs (`ADDRESS/PREFIX`) are allowed; a cloud metadata address only
   * when an entry names it alone (`169.254.169.254/32`, `fd00:ec2::254/128`).
   */
  allowCidrs?: readonly string[];
}

/**
 * Which resolved or literal addresses the crawler may connect to: public ones, plus the non-public ones an
 * operator allowed (all of them, or those inside listed CIDRs). Judged on every answer, so a name that
 * starts resolving to an inside address (DNS rebinding) is refused from that answer on. An IPv6 address
 * that embeds an IPv4 address is refused when either is, and allowed by a CIDR when what made it non-public
 * is inside one. Cloud metadata addresses are refused whatever else is allowed, unless named one by one.
 */
export class AddressPolicy {
  private readonly allowed = new BlockList();
  /** Metadata addresses named alone in allowCidrs, as normalised text. */
  private readonly namedMetadata = new Set<string>();

  constructor(private readonly options: AddressPolicyOptions = {}) {
    for (const cidr of options.allowCidrs ?? []) {
      const [net, prefix] = cidr.split('/');
      const family = isIP(net);
      if (family === 0 || !/^\d+$/.test(prefix ?? '')) throw new Error(`not a CIDR: ${cidr}`);
      this.allowed.addSubnet(net, Number(prefix), family === 4 ? 'ipv4' : 'ipv6');
      if (metadata.has(normalised(net)) && Number(prefix) === (family === 4 ? 32 : 128)) this.namedMetadata.add(normalised(net));
    }
  }

  /** Undefined when the address may be reached, else why not. */
  refusal(address: string): string | undefined {
    const parts = judged(address);
    const endpoint = metadataIn(parts);
    if (endpoint !== undefined && !this.namedMetadata.has(endpoint.key)) {
      const via = endpoint === parts[0] ? '' : ` (it embeds ${endpoint.address})`;
      return `address ${address}${via} is a cloud metadata endpoint, refused even with DNS_ALLOW_PRIVATE (allow it only by naming it alone in DNS_ALLOW_CIDRS: ${endpoint.address}/${endpoint.family === 'ipv4' ? 32 : 128})`;
    }
    if (this.options.allowPrivate) return undefined;
    const inside = parts.filter((one) => blocked.check(one.address, one.family));
    if (inside.length === 0) return undefined;
    // Allowed when the address itself, or every non-public part of it, lies in an allowed CIDR.
    if (this.allowed.check(address, parts[0].family) || inside.every((one) => this.allowed.check(one.address, one.family))) return undefined;
    const embedded = inside.find((one) => one !== parts[0]);
    const via = embedded ? ` (it embeds ${embedded.address})` : '';
    return `address ${address}${via} is not public (allow with DNS_ALLOW_PRIVATE / --allow-private, or DNS_ALLOW_CIDRS)`;
  }
}

/** One spelling per address, so that `fd00:ec2:0::254` and `fd00:ec2::254` are the same. */
function normalised(address: string): string {
  return isIP(address) === 6
    ? ipv6Groups(address)
        .map((group) => group.toString(16))
        .join(':')
    : address;
}
