// CIDR blocks as upstream's validation reads them (netutils.ParseCIDRSloppy): an IPv4 or IPv6
// address, a slash and a prefix length; IPv4 octets may carry leading zeros.
import { isIP } from 'node:net';

export interface Cidr {
  family: 4 | 6;
  /** The block's first address (host bits cleared). */
  network: bigint;
  prefix: number;
}

export const INVALID_CIDR_MESSAGE = 'must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)';

function ipv4Bits(ip: string): bigint | undefined {
  const parts = ip.split('.');
  if (parts.length !== 4 || !parts.every((p) => /^\d{1,3}$/.test(p) && Number(p) <= 255)) return undefined;
  return parts.reduce((acc, p) => (acc << 8n) | BigInt(Number(p)), 0n);
}

function ipv6Bits(ip: string): bigint | undefined {
  if (isIP(ip) !== 6) return undefined;
  let text = ip;
  // An embedded IPv4 tail ("::ffff:1.2.3.4") counts as two groups.
  const v4 = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (v4) {
    const bits = ipv4Bits(v4[1]!);
    if (bits === undefined) return undefined;
    text = `${text.slice(0, -v4[1]!.length)}${(bits >> 16n).toString(16)}:${(bits & 0xffffn).toString(16)}`;
  }
  const [head, tail] = text.split('::') as [string, string | undefined];
  const headGroups = head ? head.split(':') : [];
  const tailGroups = tail ? tail.split(':') : [];
  const missing = 8 - headGroups.length - tailGroups.length;
  const groups = tail === undefined ? headGroups : [...headGroups, ...Array<string>(missing).fill('0'), ...tailGroups];
  return groups.reduce((acc, g) => (acc << 16n) | BigInt(parseInt(g || '0', 16)), 0n);
}

/** An address as a number, or undefined when the text is not one (a zone, "%eth0", is not part of an address here, as in Go's ParseIP). */
export function parseIp(ip: string): { family: 4 | 6; bits: bigint } | undefined {
  if (ip.includes('%')) return undefined;
  const v4 = ipv4Bits(ip);
  if (v4 !== undefined) return { family: 4, bits: v4 };
  const v6 = ipv6Bits(ip);
  return v6 === undefined ? undefined : { family: 6, bits: v6 };
}

/** An address as text: dotted IPv4, or IPv6 with its longest run of zero groups shortened to "::". */
export function formatIp(bits: bigint, family: 4 | 6): string {
  if (family === 4) return [24n, 16n, 8n, 0n].map((s) => String((bits >> s) & 255n)).join('.');
  const groups = Array.from({ length: 8 }, (_, i) => Number((bits >> BigInt(112 - 16 * i)) & 0xffffn));
  let best = { at: -1, len: 0 };
  for (let i = 0; i < 8; ) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > best.len && j - i >= 2) best = { at: i, len: j - i };
    i = j;
  }
  const hex = groups.map((g) => g.toString(16));
  if (best.at < 0) return hex.join(':');
  return `${hex.slice(0, best.at).join(':')}::${hex.slice(best.at + best.len).join(':')}`;
}

/** The block a CIDR string names, or undefined when it is not one. */
export function parseCidr(text: string): Cidr | undefined {
  const slash = text.indexOf('/');
  if (slash < 0) return undefined;
  const ip = text.slice(0, slash);
  // Go's ParseCIDR takes no zone ("fe80::1%eth0/64"), though Node's isIP does.
  if (ip.includes('%')) return undefined;
  const len = text.slice(slash + 1);
  if (!/^\d{1,3}$/.test(len)) return undefined;
  const prefix = Number(len);
  const v4 = ipv4Bits(ip);
  const family: 4 | 6 | undefined = v4 !== undefined ? 4 : isIP(ip) === 6 ? 6 : undefined;
  if (family === undefined) return undefined;
  const width = family === 4 ? 32 : 128;
  if (prefix > width) return undefined;
  const bits = family === 4 ? v4! : ipv6Bits(ip);
  if (bits === undefined) return undefined;
  const hostBits = BigInt(width - prefix);
  return { family, network: (bits >> hostBits) << hostBits, prefix };
}

export function isValidCidr(text: string): boolean {
  return parseCidr(text) !== undefined;
}

/** Whether `inner` lies inside `outer` and is strictly smaller (NetworkPolicy ipBlock.except). */
export function isStrictSubset(inner: Cidr, outer: Cidr): boolean {
  if (inner.family !== outer.family || inner.prefix <= outer.prefix) return false;
  const width = BigInt((outer.family === 4 ? 32 : 128) - outer.prefix);
  return inner.network >> width === outer.network >> width;
}
