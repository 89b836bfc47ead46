import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';

/**
 * Loopback, private, link-local, carrier-grade NAT, multicast and reserved ranges: never reached for a user's URL. IPv4 and IPv6
 * rules live in separate lists: node's BlockList matches an IPv4 address against an IPv6 ::ffff:0:0/96 rule, which once refused
 * every IPv4 address. IPv4-mapped, IPv4-compatible, NAT64 and 6to4 addresses are judged by the IPv4 they carry.
 */
const BLOCKED_V4 = new BlockList();
const BLOCKED_V6 = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  BLOCKED_V4.addSubnet(network, prefix, 'ipv4');
}
for (const [network, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
  // Local-use NAT64: translated by a network's own gateway, so where it leads depends on that network.
  ['64:ff9b:1::', 48],
  // Teredo and the documentation and ORCHID ranges: no user's URL needs them.
  ['2001::', 32],
  ['2001:db8::', 32],
  ['2001:10::', 28],
] as const) {
  BLOCKED_V6.addSubnet(network, prefix, 'ipv6');
}

/** The 16 bytes of an IPv6 address (`::` shorthand and a trailing dotted IPv4 allowed); undefined when it is not one. */
function ipv6Bytes(address: string): number[] | undefined {
  if (isIP(address) !== 6) return undefined;
  let text = address.replace(/%.*$/, '');
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted[1]!.split('.').map(Number) as [number, number, number, number];
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head = '', tail] = text.split('::') as [string, string | undefined];
  const headGroups = head ? head.split(':') : [];
  const tailGroups = tail ? tail.split(':') : [];
  const groups = tail === undefined ? headGroups : [...headGroups, ...Array<string>(8 - headGroups.length - tailGroups.length).fill('0'), ...tailGroups];
  return groups.flatMap((group) => {
    const value = Number.parseInt(group, 16);
    return [value >> 8, value & 0xff];
  });
}

const startsWith = (bytes: readonly number[], prefix: readonly number[]): boolean => prefix.every((byte, index) => bytes[index] === byte);
const ipv4At = (bytes: readonly number[], offset: number): string => bytes.slice(offset, offset + 4).join('.');

/**
 * The IPv4 address an IPv6 address carries where the network would deliver to it: IPv4-mapped `::ffff:a.b.c.d`, IPv4-compatible
 * `::a.b.c.d` (::/96), NAT64
 * (64:ff9b::/96) and 6to4 (2002::/16). A guard that looked at the IPv6 form alone would let `[::127.0.0.1]` through.
 */
export function embeddedIpv4(address: string): string | undefined {
  const bytes = ipv6Bytes(address);
  if (!bytes) return undefined;
  if (startsWith(bytes, Array<number>(12).fill(0))) return ipv4At(bytes, 12);
  if (startsWith(bytes, [...Array<number>(10).fill(0), 0xff, 0xff])) return ipv4At(bytes, 12);
  if (startsWith(bytes, [0x00, 0x64, 0xff, 0x9b, ...Array<number>(8).fill(0)])) return ipv4At(bytes, 12);
  if (startsWith(bytes, [0x20, 0x02])) return ipv4At(bytes, 2);
  return undefined;
}

/** True for an address a user's URL must not reach, its embedded IPv4 address included. */
export function isBlockedAddress(address: string): boolean {
  if (isIP(address) === 4) return BLOCKED_V4.check(address, 'ipv4');
  if (BLOCKED_V6.check(address, 'ipv6')) return true;
  // IPv4-compatible addresses (::/96) are deprecated: nothing public lives there. (A BlockList rule for ::/96 would also match
  // every IPv4 address checked against it, so the range is tested here.)
  const bytes = ipv6Bytes(address);
  if (bytes && startsWith(bytes, Array<number>(12).fill(0))) return true;
  const embedded = embeddedIpv4(address);
  return embedded !== undefined && BLOCKED_V4.check(embedded, 'ipv4');
}

/**
 * Checks a URL given by a user (webhook, image, function): http(s) only, no credentials, and — unless private URLs are
 * allowed (tests, demo) — a host that resolves only to public addresses. Returns the reason it is refused, or undefined.
 */
export async function refuseUrl(text: string, allowPrivate: boolean): Promise<string | undefined> {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return 'is not a valid URL';
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return 'must be an http or https URL';
  if (url.username || url.password) return 'must not contain credentials';
  if (allowPrivate) return undefined;
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (host === 'localhost' || host.endsWith('.localhost')) return 'must not point to a private or loopback address';
  let addresses: string[];
  try {
    addresses = isIP(host) ? [host] : (await lookup(host, { all: true, verbatim: true })).map((entry) => entry.address);
  } catch {
    return 'has a host name that does not resolve';
  }
  if (addresses.length === 0 || addresses.some(isBlockedAddress)) return 'must not point to a private or loopback address';
  return undefined;
}
