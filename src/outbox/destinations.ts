/**
 * Which addresses a webhook may reach. A webhook URL is set through the admin API and its
 * answer is recorded, so without a policy the relay is a way into the node's own network
 * (loopback admin listeners, cloud metadata at 169.254.169.254, private services). By
 * default every address that is not globally routable is refused; an operator opens
 * specific ones with ROOMS_WEBHOOK_ALLOW_PRIVATE (CIDRs, addresses or host names).
 *
 * The check runs on the address actually connected to: {@link DestinationPolicy.lookup}
 * is the `lookup` of the webhook sink's HTTP agents, so a name is resolved once per
 * connection, the answers are checked, and the socket connects to a checked answer. A DNS
 * answer that changes between a check and the connect (rebinding) is never used unchecked.
 */
import { lookup as dnsLookup } from 'node:dns';
import { BlockList, isIP, type LookupFunction } from 'node:net';

/** One resolved address, as `dns.lookup(name, { all: true })` gives it. */
export interface ResolvedAddress {
  readonly address: string;
  readonly family: 4 | 6;
}

/** Resolves a host name to every address it has. */
export type Resolver = (hostname: string) => Promise<readonly ResolvedAddress[]>;

export const REFUSED_CODE = 'EDESTINATIONREFUSED';

/** The connect error of a refused destination; `code` is {@link REFUSED_CODE}. */
export class DestinationRefusedError extends Error {
  override name = 'DestinationRefusedError';
  readonly code = REFUSED_CODE;
}

type Family = 'ipv4' | 'ipv6';

/** Non-global ranges (IANA special-purpose registries), with the reason a refusal names. */
const REFUSED: readonly (readonly [string, number, Family, string])[] = [
  ['0.0.0.0', 8, 'ipv4', 'unspecified'],
  ['10.0.0.0', 8, 'ipv4', 'private'],
  ['100.64.0.0', 10, 'ipv4', 'private'], // carrier-grade NAT
  ['127.0.0.0', 8, 'ipv4', 'loopback'],
  ['169.254.0.0', 16, 'ipv4', 'link-local'],
  ['172.16.0.0', 12, 'ipv4', 'private'],
  ['192.0.0.0', 24, 'ipv4', 'reserved'],
  ['192.0.2.0', 24, 'ipv4', 'reserved'],
  ['192.168.0.0', 16, 'ipv4', 'private'],
  ['198.18.0.0', 15, 'ipv4', 'reserved'],
  ['198.51.100.0', 24, 'ipv4', 'reserved'],
  ['203.0.113.0', 24, 'ipv4', 'reserved'],
  ['224.0.0.0', 4, 'ipv4', 'multicast'],
  ['240.0.0.0', 4, 'ipv4', 'reserved'], // also 255.255.255.255
  ['::', 128, 'ipv6', 'unspecified'],
  ['::1', 128, 'ipv6', 'loopback'],
  ['::', 96, 'ipv6', 'reserved'], // IPv4-compatible (deprecated)
  ['100::', 64, 'ipv6', 'reserved'], // discard
  ['2001:db8::', 32, 'ipv6', 'reserved'],
  ['fc00::', 7, 'ipv6', 'unique-local'],
  ['fe80::', 10, 'ipv6', 'link-local'],
  ['fec0::', 10, 'ipv6', 'private'], // site-local (deprecated)
  ['ff00::', 8, 'ipv6', 'multicast'],
];

const refusedLists = new Map<string, BlockList>();
for (const [network, prefix, family, reason] of REFUSED) {
  let list = refusedLists.get(reason);
  if (!list) refusedLists.set(reason, (list = new BlockList()));
  list.addSubnet(network, prefix, family);
}

export class DestinationPolicy {
  private readonly allowedAddresses = new BlockList();
  private readonly allowedHosts = new Set<string>();

  /**
   * `allowPrivate`: entries of ROOMS_WEBHOOK_ALLOW_PRIVATE: a CIDR (`10.1.0.0/16`,
   * `fd00::/8`), an address (`127.0.0.1`, `::1`) or a host name (`hooks.internal`: every
   * address it resolves to is allowed). Throws on an entry that is none of these.
   */
  constructor(
    allowPrivate: readonly string[] = [],
    private readonly resolver: Resolver = systemResolver,
  ) {
    for (const raw of allowPrivate) {
      const entry = raw.trim().toLowerCase();
      if (!entry) continue;
      const cidr = parseCidr(entry);
      if (cidr) this.allowedAddresses.addSubnet(cidr.network, cidr.prefix, cidr.family);
      else if (isIP(unbracket(entry))) {
        const address = unbracket(entry);
        this.allowedAddresses.addAddress(address, isIP(address) === 6 ? 'ipv6' : 'ipv4');
      } else if (/^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*\.?$/.test(entry))
        this.allowedHosts.add(entry.replace(/\.$/, ''));
      else throw new Error(`not a CIDR, an IP address or a host name: ${JSON.stringify(raw)}`);
    }
  }

  /**
   * Why a connection to `address` (reached through host name `hostname`) is refused, or
   * null when it is allowed.
   */
  refusal(address: string, hostname?: string): string | null {
    if (hostname !== undefined && this.allowedHosts.has(normalizeHost(hostname))) return null;
    const ip = unbracket(address);
    const family: Family | null = isIP(ip) === 4 ? 'ipv4' : isIP(ip) === 6 ? 'ipv6' : null;
    if (!family) return 'not an IP address';
    if (this.allowedAddresses.check(ip, family)) return null;
    for (const candidate of embeddedIpv4(ip, family)) {
      if (this.allowedAddresses.check(candidate, 'ipv4')) return null;
    }
    for (const [reason, list] of refusedLists) {
      if (list.check(ip, family)) return reason;
      for (const candidate of embeddedIpv4(ip, family)) {
        if (list.check(candidate, 'ipv4')) return reason;
      }
    }
    return null;
  }

  /**
   * Checks a URL's host when it is an IP literal (a socket connects to a literal without a
   * lookup, so the agent's `lookup` never sees it). Host names pass here: they are checked
   * when resolved. Returns the refusal message, or null.
   */
  refuseLiteral(url: URL): string | null {
    const host = unbracket(url.hostname);
    if (!isIP(host)) return null;
    const reason = this.refusal(host, url.hostname);
    return reason ? refusedMessage(reason) : null;
  }

  /**
   * A `net` lookup for HTTP agents: resolves every address of the name, drops the refused
   * ones and hands the rest to the socket, which connects only to those. Fails with
   * {@link DestinationRefusedError} when none is left.
   */
  readonly lookup: LookupFunction = (hostname, options, callback) => {
    const { family } = options;
    const wanted =
      family === 4 || family === 'IPv4' ? 4 : family === 6 || family === 'IPv6' ? 6 : 0;
    this.resolver(hostname).then(
      (addresses) => {
        const reasons: string[] = [];
        const usable = addresses.filter((a) => {
          if (wanted !== 0 && a.family !== wanted) return false;
          const reason = this.refusal(a.address, hostname);
          if (reason) reasons.push(reason);
          return reason === null;
        });
        if (usable.length === 0) {
          const error = reasons.length
            ? new DestinationRefusedError(refusedMessage([...new Set(reasons)].join('/')))
            : Object.assign(new Error(`no address for ${hostname}`), { code: 'ENOTFOUND' });
          callback(error, '', 4);
        } else if (options.all) {
          callback(
            null,
            usable.map((a) => ({ address: a.address, family: a.family })),
          );
        } else callback(null, usable[0]!.address, usable[0]!.family);
      },
      (error: NodeJS.ErrnoException) => callback(error, '', 4),
    );
  };
}

/** The one text a refusal records: it names the kind of address, never the address. */
export function refusedMessage(reason: string): string {
  return `destination refused: ${reason} address (see ROOMS_WEBHOOK_ALLOW_PRIVATE)`;
}

const systemResolver: Resolver = (hostname) =>
  new Promise((resolve, reject) => {
    dnsLookup(hostname, { all: true, verbatim: true }, (error, addresses) => {
      if (error) reject(error);
      else resolve(addresses.map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 })));
    });
  });

function unbracket(host: string): string {
  return host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
}

function normalizeHost(host: string): string {
  return unbracket(host).toLowerCase().replace(/\.$/, '');
}

function parseCidr(entry: string): { network: string; prefix: number; family: Family } | null {
  const match = /^([^/]+)\/(\d{1,3})$/.exec(entry);
  if (!match) return null;
  const network = unbracket(match[1]!);
  const version = isIP(network);
  const prefix = Number(match[2]);
  if (version === 0 || prefix > (version === 4 ? 32 : 128)) {
    throw new Error(`not a valid CIDR: ${JSON.stringify(entry)}`);
  }
  return { network, prefix, family: version === 4 ? 'ipv4' : 'ipv6' };
}

/**
 * IPv4 addresses an IPv6 address carries and that a router may turn back into IPv4:
 * IPv4-mapped (::ffff:a.b.c.d), NAT64 (64:ff9b::/96) and 6to4 (2002:AABB:CCDD::/48).
 */
function embeddedIpv4(ip: string, family: Family): string[] {
  if (family !== 'ipv6') return [];
  const words = expandIpv6(ip);
  if (!words) return [];
  const v4 = (hi: number, lo: number) => `${hi >> 8}.${hi & 0xff}.${lo >> 8}.${lo & 0xff}`;
  const out: string[] = [];
  const zeros = (from: number, to: number) => words.slice(from, to).every((w) => w === 0);
  if (zeros(0, 5) && words[5] === 0xffff) out.push(v4(words[6]!, words[7]!));
  if (words[0] === 0x64 && words[1] === 0xff9b && zeros(2, 6)) out.push(v4(words[6]!, words[7]!));
  if (words[0] === 0x2002) out.push(v4(words[1]!, words[2]!));
  return out;
}

/** The eight 16-bit words of an IPv6 address (with or without an IPv4 tail). */
function expandIpv6(ip: string): number[] | null {
  let text = ip.split('%')[0]!;
  const tail = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (tail) {
    const [a, b, c, d] = tail.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, tail.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head = '', rest] = text.split('::');
  const left = head ? head.split(':') : [];
  const right = rest ? rest.split(':') : [];
  const missing = 8 - left.length - right.length;
  if (rest === undefined ? missing !== 0 : missing < 0) return null;
  const words = [...left, ...Array<string>(rest === undefined ? 0 : missing).fill('0'), ...right];
  const parsed = words.map((w) => parseInt(w, 16));
  return parsed.length === 8 && parsed.every((w) => w >= 0 && w <= 0xffff) ? parsed : null;
}
