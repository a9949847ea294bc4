import { BlockList, isIP } from 'node:net';

/** The proxies in front of the edge whose `X-Forwarded-For` is believed. */
export type TrustedProxies = BlockList;

/**
 * Proxies given as addresses or CIDR ranges (`10.0.0.0/8`, `192.168.1.5`, `::1`); throws on an
 * entry that is neither, so a typo fails at start rather than trusting nothing.
 */
export function trustedProxies(entries: readonly string[]): TrustedProxies {
  const list = new BlockList();
  for (const entry of entries.map((e) => e.trim()).filter(Boolean)) {
    const [address = '', bits] = entry.split('/');
    const version = isIP(address);
    const prefix = bits === undefined ? undefined : Number(bits);
    const maxBits = version === 6 ? 128 : 32;
    if (!version || (prefix !== undefined && !(Number.isInteger(prefix) && prefix >= 0 && prefix <= maxBits))) {
      throw new Error(`trusted proxy "${entry}" is neither an IP address nor a CIDR range`);
    }
    const type = version === 6 ? 'ipv6' : 'ipv4';
    if (prefix === undefined) list.addAddress(address, type);
    else list.addSubnet(address, prefix, type);
  }
  return list;
}

/** An IPv4 address as IPv6 (`::ffff:10.0.0.1`, as dual-stack sockets report it) is the IPv4 address. */
const unmapped = (address: string) => (/^::ffff:\d+\.\d+\.\d+\.\d+$/i.test(address) ? address.slice(7) : address);

function isTrusted(trusted: TrustedProxies, address: string): boolean {
  const version = isIP(address);
  return version !== 0 && trusted.check(address, version === 6 ? 'ipv6' : 'ipv4');
}

/**
 * The client's address: the connection's peer, or, when the peer is a trusted proxy, the nearest
 * address in `X-Forwarded-For` that is not a trusted proxy (addresses the client wrote itself
 * stand further left and are never taken).
 */
export function clientAddressOf(peer: string | undefined, forwardedFor: string | null, trusted?: TrustedProxies): string {
  if (!peer) return 'unknown';
  const address = unmapped(peer);
  if (!trusted || !forwardedFor || !isTrusted(trusted, address)) return address;
  const hops = forwardedFor.split(',').map((hop) => unmapped(hop.trim())).filter(Boolean);
  for (let i = hops.length - 1; i >= 0; i--) if (!isTrusted(trusted, hops[i]!)) return hops[i]!;
  return hops[0] ?? address;
}
