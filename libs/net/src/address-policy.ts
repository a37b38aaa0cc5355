import { BlockList, isIP } from 'node:net';
import { type EmbeddingForm, embeddedIn, ipv6Groups } from './embedded-ipv4';

/**
 * Addresses a crawler must not reach unless told to: they lead into the crawler's own network (SSRF)
 * rather than to the public web. Each range with what it is, in the words a refusal uses ("address ::1 is
 * not public: it is loopback").
 */
const NON_PUBLIC_V4: [string, number, string][] = [
  ['0.0.0.0', 8, '"this" network (unspecified)'],
  ['10.0.0.0', 8, 'private'],
  ['100.64.0.0', 10, 'carrier-grade NAT space'],
  ['127.0.0.0', 8, 'loopback'],
  ['169.254.0.0', 16, 'link-local'], // also cloud metadata (169.254.169.254)
  ['172.16.0.0', 12, 'private'],
  ['192.0.0.0', 24, 'reserved for IETF protocol assignments'],
  ['192.168.0.0', 16, 'private'],
  ['198.18.0.0', 15, 'reserved for benchmarking'],
  ['224.0.0.0', 4, 'multicast'],
  ['240.0.0.0', 4, 'reserved (or broadcast)'],
];
const NON_PUBLIC_V6: [string, number, string][] = [
  ['::', 128, 'unspecified'],
  ['::1', 128, 'loopback'],
  // Its IPv4 part may sit anywhere, so the whole prefix is refused.
  ['64:ff9b:1::', 48, 'local-use NAT64'],
  ['fc00::', 7, 'unique local'],
  ['fe80::', 10, 'link-local'],
  ['fec0::', 10, 'site-local (deprecated, still routed inside some networks)'],
  ['ff00::', 8, 'multicast'],
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
/** One BlockList per range, to name the range an address lies in. */
const ranges = [
  ...NON_PUBLIC_V4.map(([net, prefix, kind]) => ({ family: 'ipv4' as const, kind, list: subnet(net, prefix, 'ipv4') })),
  ...NON_PUBLIC_V6.map(([net, prefix, kind]) => ({ family: 'ipv6' as const, kind, list: subnet(net, prefix, 'ipv6') })),
];

function subnet(net: string, prefix: number, family: 'ipv4' | 'ipv6'): BlockList {
  const list = new BlockList();
  list.addSubnet(net, prefix, family);
  return list;
}

/** What a non-public address is by a range of its own family: "loopback", "private"… */
function kindOf(part: Part): string | undefined {
  return ranges.find((range) => range.family === part.family && range.list.check(part.address, part.family))?.kind;
}

const FORM_NAMES: Record<EmbeddingForm, string> = {
  'ipv4-mapped': 'an IPv4-mapped',
  'ipv4-translated': 'an IPv4-translated',
  'ipv4-compatible': 'an IPv4-compatible',
  nat64: 'a NAT64',
  '6to4': 'a 6to4',
  teredo: 'a Teredo',
};

const metadata = new Set(METADATA_ADDRESSES.map(normalised));

interface Part {
  address: string;
  family: 'ipv4' | 'ipv6';
  /** One spelling per address (see normalised). */
  key: string;
  /** For an IPv4 address an IPv6 one carries: the form that carries it. */
  form?: EmbeddingForm;
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
  const embedded = embeddedIn(groups);
  return [
    { address, family: 'ipv6', key: groups.map((group) => group.toString(16)).join(':') },
    ...(embedded?.ipv4 ?? []).map((ipv4) => ({ address: ipv4, family: 'ipv4' as const, key: ipv4, form: embedded?.form })),
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
      const via = endpoint.form ? ` (${FORM_NAMES[endpoint.form]} address for ${endpoint.address})` : '';
      return `address ${address}${via} is a cloud metadata endpoint, refused even with DNS_ALLOW_PRIVATE (allow it only by naming it alone in DNS_ALLOW_CIDRS: ${endpoint.address}/${endpoint.family === 'ipv4' ? 32 : 128})`;
    }
    if (this.options.allowPrivate) return undefined;
    const inside = parts.filter((one) => blocked.check(one.address, one.family));
    if (inside.length === 0) return undefined;
    // Allowed when the address itself, or every non-public part of it, lies in an allowed CIDR.
    if (this.allowed.check(address, parts[0].family) || inside.every((one) => this.allowed.check(one.address, one.family))) return undefined;
    // Named by the part in a range of its own family (BlockList also matches `::ffff:127.0.0.1` against
    // 127.0.0.0/8; the words are then of the IPv4 address it carries), preferably one no CIDR allows.
    const named = inside.filter((one) => kindOf(one) !== undefined);
    const refused = named.find((one) => !this.allowed.check(one.address, one.family)) ?? named[0];
    return `address ${address} is not public: ${what(refused)} (allow with DNS_ALLOW_PRIVATE / --allow-private, or DNS_ALLOW_CIDRS)`;
  }
}

/**
 * What makes a non-public part so, in words: the address's own range when it lies in one (`::1` is
 * loopback, though its last 32 bits read as 0.0.0.1), else the form that carries the IPv4 address and that
 * address's range.
 */
function what(part: Part): string {
  return part.form ? `it is ${FORM_NAMES[part.form]} address for ${part.address}, which is ${kindOf(part)}` : `it is ${kindOf(part)}`;
}

/** One spelling per address, so that `fd00:ec2:0::254` and `fd00:ec2::254` are the same. */
function normalised(address: string): string {
  return isIP(address) === 6
    ? ipv6Groups(address)
        .map((group) => group.toString(16))
        .join(':')
    : address;
}
