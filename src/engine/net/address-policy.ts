/**
 * Outbound address policy (SSRF protection), `--experimental-allowed-ip-networks`.
 *
 * Calls the server makes on a user's behalf (task webhooks, REST embedders) must not reach the
 * machine itself or its private network unless the operator says so: addresses in private,
 * loopback, link-local and other non-public ranges are refused unless they fall in one of the
 * allowed networks (a CIDR list) or the option is `any`. Public addresses are always allowed.
 */
import { BlockList, isIP } from 'node:net';

/** Ranges that are not publicly routable (RFC 6890 special-purpose registries, abridged). */
const NON_PUBLIC_V4 = [
  '0.0.0.0/8',
  '10.0.0.0/8',
  '100.64.0.0/10',
  '127.0.0.0/8',
  '169.254.0.0/16',
  '172.16.0.0/12',
  '192.0.0.0/24',
  '192.0.2.0/24',
  '192.168.0.0/16',
  '198.18.0.0/15',
  '198.51.100.0/24',
  '203.0.113.0/24',
  '224.0.0.0/4',
  '240.0.0.0/4',
];
const NON_PUBLIC_V6 = ['::/128', '::1/128', '64:ff9b::/96', '100::/64', '2001:db8::/32', 'fc00::/7', 'fe80::/10', 'ff00::/8'];

export class OutboundAddressError extends Error {
  constructor(
    readonly host: string,
    readonly address: string,
  ) {
    super(
      `Refusing to connect to \`${host}\` (${address}): private, loopback and link-local addresses are not allowed. ` +
        'Allow the network with --experimental-allowed-ip-networks.',
    );
    this.name = 'OutboundAddressError';
  }
}

export class InvalidNetworkError extends Error {
  constructor(spec: string) {
    super(`\`${spec}\` is not a valid network: expected \`any\` or a comma-separated list of CIDRs such as \`10.0.0.0/8,::1/128\`.`);
    this.name = 'InvalidNetworkError';
  }
}

function addCidr(list: BlockList, cidr: string): boolean {
  const slash = cidr.lastIndexOf('/');
  const ip = slash < 0 ? cidr : cidr.slice(0, slash);
  const family = isIP(ip);
  if (family === 0) return false;
  const max = family === 4 ? 32 : 128;
  const prefix = slash < 0 ? max : Number(cidr.slice(slash + 1));
  if (!Number.isInteger(prefix) || prefix < 0 || prefix > max || (slash >= 0 && cidr.slice(slash + 1) === '')) return false;
  list.addSubnet(ip, prefix, family === 4 ? 'ipv4' : 'ipv6');
  return true;
}

const NON_PUBLIC = (() => {
  const list = new BlockList();
  for (const c of [...NON_PUBLIC_V4, ...NON_PUBLIC_V6]) addCidr(list, c);
  return list;
})();

/** `::ffff:127.0.0.1` and `::ffff:7f00:1` are IPv4 in disguise: judge them as IPv4. */
function unmapIPv4(address: string): string {
  const lower = address.toLowerCase();
  if (!lower.startsWith('::ffff:')) return address;
  const rest = lower.slice('::ffff:'.length);
  if (isIP(rest) === 4) return rest;
  const m = /^([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(rest);
  if (!m) return address;
  const hi = parseInt(m[1]!, 16);
  const lo = parseInt(m[2]!, 16);
  return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
}

function check(list: BlockList, address: string): boolean {
  const ip = unmapIPv4(address);
  const family = isIP(ip);
  if (family === 0) return false;
  return list.check(ip, family === 4 ? 'ipv4' : 'ipv6');
}

export class AddressPolicy {
  private constructor(
    private readonly allowAny: boolean,
    private readonly allowed: BlockList,
    readonly description: string,
    /** What `parse` makes this policy from again (another thread gets the policy this way). */
    readonly spec: string,
  ) {}

  /** The default: only public addresses. */
  static publicOnly(): AddressPolicy {
    return new AddressPolicy(false, new BlockList(), 'public addresses only', '');
  }

  /**
   * Parse `--experimental-allowed-ip-networks`: `any`, or CIDRs separated by commas (a bare
   * address means that one host). Empty or absent means public addresses only.
   */
  static parse(spec: string | readonly string[] | null | undefined): AddressPolicy {
    const parts = (typeof spec === 'string' ? spec.split(',') : [...(spec ?? [])].flatMap((s) => s.split(',')))
      .map((s) => s.trim())
      .filter((s) => s !== '');
    if (parts.length === 0) return AddressPolicy.publicOnly();
    if (parts.some((p) => p.toLowerCase() === 'any')) {
      if (parts.length > 1) throw new InvalidNetworkError(parts.join(','));
      return new AddressPolicy(true, new BlockList(), 'any address', 'any');
    }
    const allowed = new BlockList();
    for (const p of parts) if (!addCidr(allowed, p)) throw new InvalidNetworkError(p);
    return new AddressPolicy(false, allowed, parts.join(','), parts.join(','));
  }

  /** Whether a resolved IP address may be connected to. */
  allows(address: string): boolean {
    if (isIP(unmapIPv4(address)) === 0) return false;
    if (this.allowAny) return true;
    if (!check(NON_PUBLIC, address)) return true;
    return check(this.allowed, address);
  }

  /** Throw `OutboundAddressError` unless `address` (resolved from `host`) is allowed. */
  assert(host: string, address: string): void {
    if (!this.allows(address)) throw new OutboundAddressError(host, address);
  }
}

/**
 * The process-wide policy, set once by `search serve` from its flags; the engine's outbound
 * callers (webhooks, REST embedders) read it rather than having it threaded through every call.
 * Each thread has its own copy: the write thread follows the serving thread's through
 * `onOutboundPolicyChange` (see tasks/write-thread.ts).
 */
let current: AddressPolicy = AddressPolicy.publicOnly();
const listeners = new Set<(policy: AddressPolicy) => void>();

export function setOutboundPolicy(policy: AddressPolicy): void {
  current = policy;
  for (const listener of listeners) listener(policy);
}

/** Follow changes of this thread's policy; returns the function that stops following. */
export function onOutboundPolicyChange(listener: (policy: AddressPolicy) => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

export function outboundPolicy(): AddressPolicy {
  return current;
}
