import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import type { LookupFunction } from 'node:net';

/** A socket `lookup` that answers the benchmark web's host names with their loopback addresses (`ips`), and asks DNS for any other name. */
export function hostsLookup(ips: Readonly<Record<string, string>>): LookupFunction {
  return (hostname, options, callback) => {
    const ip = ips[hostname];
    if (!ip) return dnsLookup(hostname, options, callback);
    const answer: LookupAddress = { address: ip, family: 4 };
    if ((options as { all?: boolean }).all) (callback as (e: null, a: LookupAddress[]) => void)(null, [answer]);
    else callback(null, ip, 4);
  };
}
