import { isIP } from 'node:net';

/**
 * IPv6 forms that carry an IPv4 address, and where. A packet to such an address may end up at that IPv4
 * address (a NAT64 gateway, a 6to4 relay, a dual-stack socket, a Teredo relay), so it is judged by the
 * IPv4 address's rules as well as its own.
 */
export type EmbeddingForm = 'ipv4-mapped' | 'ipv4-translated' | 'ipv4-compatible' | 'nat64' | '6to4' | 'teredo';

export interface EmbeddedIpv4 {
  form: EmbeddingForm;
  /** Every IPv4 address the form carries (Teredo carries two: its server's and its client's). */
  ipv4: string[];
}

/** The eight 16-bit groups of an IPv6 address in any textual form (`::`, a dotted IPv4 tail, a zone). */
export function ipv6Groups(address: string): number[] {
  let text = address.replace(/%.*$/, '');
  if (isIP(text) !== 6) throw new Error(`not an IPv6 address: ${address}`);
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number);
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.split('::');
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const groups = tail === undefined ? left : [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right];
  return groups.map((group) => parseInt(group, 16));
}

function ipv4Of(high: number, low: number): string {
  return [high >> 8, high & 0xff, low >> 8, low & 0xff].join('.');
}

/** The IPv4 address(es) an IPv6 address embeds, and in which form; undefined for IPv4 or a plain IPv6 address. */
export function embeddedIpv4(address: string): EmbeddedIpv4 | undefined {
  return isIP(address.replace(/%.*$/, '')) === 6 ? embeddedIn(ipv6Groups(address)) : undefined;
}

/** embeddedIpv4 of an address already split into its eight groups. */
export function embeddedIn(g: readonly number[]): EmbeddedIpv4 | undefined {
  const zeroes = (from: number, to: number) => g.slice(from, to).every((group) => group === 0);
  const last = ipv4Of(g[6], g[7]);
  // ::ffff:0:0/96, what a dual-stack socket shows for an IPv4 peer.
  if (zeroes(0, 5) && g[5] === 0xffff) return { form: 'ipv4-mapped', ipv4: [last] };
  // ::ffff:0:0:0/96 (RFC 2765 SIIT).
  if (zeroes(0, 4) && g[4] === 0xffff && g[5] === 0) return { form: 'ipv4-translated', ipv4: [last] };
  // ::/96, deprecated (RFC 4291 §2.5.5.1); `::` and `::1` fall here too and carry 0.0.0.0 and 0.0.0.1.
  if (zeroes(0, 6)) return { form: 'ipv4-compatible', ipv4: [last] };
  // 64:ff9b::/96, the well-known NAT64 prefix (RFC 6052): the gateway connects to the IPv4 address.
  if (g[0] === 0x64 && g[1] === 0xff9b && zeroes(2, 6)) return { form: 'nat64', ipv4: [last] };
  // 2002::/16 (RFC 3056): bits 16–47 are the IPv4 address of the site's 6to4 router.
  if (g[0] === 0x2002) return { form: '6to4', ipv4: [ipv4Of(g[1], g[2])] };
  // 2001::/32 (RFC 4380): bits 32–63 the Teredo server, bits 96–127 the client's address, inverted.
  if (g[0] === 0x2001 && g[1] === 0) return { form: 'teredo', ipv4: [ipv4Of(g[2], g[3]), ipv4Of(~g[6] & 0xffff, ~g[7] & 0xffff)] };
  return undefined;
}
