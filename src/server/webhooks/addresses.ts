/**
 * Which IP addresses a webhook may reach without being listed by address:
 * public unicast only. Loopback, private, link-local, carrier-grade NAT,
 * unique-local, multicast, reserved and unspecified addresses are not public,
 * and neither is an IPv6 address that embeds one (IPv4-mapped `::ffff:a.b.c.d`,
 * IPv4-compatible, NAT64 `64:ff9b::/96`, 6to4 `2002::/16`).
 */
import { BlockList, isIPv4, isIPv6 } from "node:net";

const V4_NOT_PUBLIC: [string, number][] = [
  ["0.0.0.0", 8],
  ["10.0.0.0", 8],
  ["100.64.0.0", 10],
  ["127.0.0.0", 8],
  ["169.254.0.0", 16],
  ["172.16.0.0", 12],
  ["192.0.0.0", 24],
  ["192.0.2.0", 24],
  ["192.88.99.0", 24],
  ["192.168.0.0", 16],
  ["198.18.0.0", 15],
  ["198.51.100.0", 24],
  ["203.0.113.0", 24],
  ["224.0.0.0", 4],
  ["240.0.0.0", 4],
];
const V6_NOT_PUBLIC: [string, number][] = [
  ["::", 128],
  ["::1", 128],
  ["100::", 64],
  ["2001:db8::", 32],
  ["2001::", 23],
  ["fc00::", 7],
  ["fe80::", 10],
  ["fec0::", 10],
  ["ff00::", 8],
];

const v4 = new BlockList();
for (const [network, prefix] of V4_NOT_PUBLIC) v4.addSubnet(network, prefix, "ipv4");
const v6 = new BlockList();
for (const [network, prefix] of V6_NOT_PUBLIC) v6.addSubnet(network, prefix, "ipv6");

/** The eight 16-bit groups of an IPv6 address (with an embedded dotted IPv4 tail expanded). */
export function ipv6Groups(address: string): number[] | undefined {
  let text = address.toLowerCase().replace(/^\[|\]$/g, "");
  const zone = text.indexOf("%");
  if (zone >= 0) text = text.slice(0, zone);
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted?.[1]) {
    if (!isIPv4(dotted[1])) return undefined;
    const [a, b, c, d] = dotted[1].split(".").map(Number) as [number, number, number, number];
    text = `${text.slice(0, -dotted[1].length)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const halves = text.split("::");
  if (halves.length > 2) return undefined;
  const part = (half: string | undefined) => (half ? half.split(":") : []);
  const head = part(halves[0]);
  const tail = part(halves[1]);
  const missing = 8 - head.length - tail.length;
  if (halves.length === 1 ? missing !== 0 : missing < 1) return undefined;
  const groups = [...head, ...Array<string>(halves.length === 2 ? missing : 0).fill("0"), ...tail].map((group) =>
    /^[0-9a-f]{1,4}$/.test(group) ? Number.parseInt(group, 16) : Number.NaN,
  );
  return groups.some(Number.isNaN) ? undefined : groups;
}

const v4Of = (high: number, low: number) => `${high >> 8}.${high & 0xff}.${low >> 8}.${low & 0xff}`;

/** The IPv4 address an IPv6 address carries (mapped, compatible, NAT64, 6to4), if any. */
export function embeddedIPv4(groups: number[]): string | undefined {
  const [g0, g1, g2, g3, g4, g5, g6, g7] = groups as [number, number, number, number, number, number, number, number];
  const zeros = (values: number[]) => values.every((value) => value === 0);
  // The whole of ::/96 counts as IPv4-compatible, `::` and `::1` included: they map into 0.0.0.0/8, never public.
  if (zeros([g0, g1, g2, g3, g4]) && (g5 === 0xffff || g5 === 0)) return v4Of(g6, g7);
  if (g0 === 0x64 && g1 === 0xff9b && zeros([g2, g3, g4, g5])) return v4Of(g6, g7);
  if (g0 === 0x2002) return v4Of(g1, g2);
  return undefined;
}

/** Whether `address` (IPv4 or IPv6 text) is a public unicast address. */
export function isPublicAddress(address: string): boolean {
  if (isIPv4(address)) return !v4.check(address, "ipv4") && address !== "255.255.255.255";
  const groups = ipv6Groups(address);
  if (!groups || !isIPv6(address.replace(/^\[|\]$/g, "").split("%")[0] ?? "")) return false;
  const inner = embeddedIPv4(groups);
  if (inner !== undefined) return isPublicAddress(inner);
  return !v6.check(groups.map((group) => group.toString(16)).join(":"), "ipv6");
}

/** The canonical text of an address, so a listed address compares equal however it is written. */
export function canonicalAddress(address: string): string | undefined {
  if (isIPv4(address)) return address;
  const groups = ipv6Groups(address);
  if (!groups) return undefined;
  const inner = embeddedIPv4(groups);
  if (inner !== undefined && groups[5] === 0xffff) return inner;
  return groups.map((group) => group.toString(16)).join(":");
}
