/**
 * HTTP(S) requests to user-supplied URLs under the outbound address policy.
 *
 * The check happens on the address actually connected to (through the socket's `lookup`), so a
 * name that resolves to a private address is refused even if it resolved elsewhere a moment ago
 * (DNS rebinding). IP literals skip `lookup` in Node, so they are checked before connecting.
 * Redirects are never followed: a public URL cannot bounce the request inward.
 */
import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP } from 'node:net';
import { outboundPolicy, type AddressPolicy } from './address-policy.js';

export interface OutboundRequestOptions {
  method?: string;
  headers?: Record<string, string>;
  body?: Buffer | string;
  timeoutMs?: number;
  policy?: AddressPolicy;
  signal?: AbortSignal;
}

export interface OutboundResponse {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/** A `lookup` for sockets that refuses every resolution containing a disallowed address. */
export function guardedLookup(policy: AddressPolicy) {
  return (hostname: string, options: LookupOptions, callback: LookupCallback): void => {
    dnsLookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, options.all ? [] : '');
      const list = addresses as LookupAddress[];
      const refused = list.find((a) => !policy.allows(a.address));
      if (refused) {
        try {
          policy.assert(hostname, refused.address);
        } catch (e) {
          return callback(e as NodeJS.ErrnoException, options.all ? [] : '');
        }
      }
      if (options.all) return callback(null, list);
      const first = list[0];
      if (!first) return callback(Object.assign(new Error(`No address for ${hostname}`), { code: 'ENOTFOUND' }), '');
      callback(null, first.address, first.family);
    });
  };
}

function hostOf(url: URL): string {
  // `[::1]` -> `::1`
  return url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
}

/** Resolve `url`'s host and throw `OutboundAddressError` if any address is refused (for callers using `fetch`). */
export async function assertUrlAllowed(url: string | URL, policy: AddressPolicy = outboundPolicy()): Promise<void> {
  const u = typeof url === 'string' ? new URL(url) : url;
  const host = hostOf(u);
  if (isIP(host)) return policy.assert(host, host);
  const addresses = await new Promise<LookupAddress[]>((resolve, reject) =>
    dnsLookup(host, { all: true }, (err, list) => (err ? reject(err) : resolve(list))),
  );
  for (const a of addresses) policy.assert(host, a.address);
}

export function outboundRequest(url: string | URL, o: OutboundRequestOptions = {}): Promise<OutboundResponse> {
  const u = typeof url === 'string' ? new URL(url) : url;
  const policy = o.policy ?? outboundPolicy();
  return new Promise<OutboundResponse>((resolve, reject) => {
    if (u.protocol !== 'http:' && u.protocol !== 'https:') {
      reject(new Error(`Unsupported protocol \`${u.protocol}\`: only http and https are allowed.`));
      return;
    }
    const host = hostOf(u);
    if (isIP(host)) {
      try {
        policy.assert(host, host);
      } catch (e) {
        reject(e);
        return;
      }
    }
    const send = u.protocol === 'https:' ? httpsRequest : httpRequest;
    const req = send(
      u,
      {
        method: o.method ?? 'GET',
        headers: o.headers,
        lookup: guardedLookup(policy) as never,
        timeout: o.timeoutMs ?? 30_000,
        signal: o.signal,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`Request to ${u.origin} timed out after ${o.timeoutMs ?? 30_000} ms.`)));
    req.on('error', reject);
    req.end(o.body);
  });
}
