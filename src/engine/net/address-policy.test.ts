import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AddressPolicy, InvalidNetworkError, OutboundAddressError } from './address-policy.js';
import { assertUrlAllowed, outboundRequest } from './outbound-request.js';

describe('AddressPolicy', () => {
  it('refuses non-public addresses by default and allows public ones', () => {
    const p = AddressPolicy.publicOnly();
    for (const ip of ['127.0.0.1', '10.1.2.3', '172.16.0.1', '192.168.1.1', '169.254.169.254', '0.0.0.0', '::1', 'fe80::1', 'fd00::1', '::ffff:127.0.0.1', '::ffff:7f00:1', '100.64.0.1'])
      expect(p.allows(ip), ip).toBe(false);
    for (const ip of ['8.8.8.8', '1.1.1.1', '2606:4700:4700::1111', '172.32.0.1']) expect(p.allows(ip), ip).toBe(true);
    expect(p.allows('not-an-ip')).toBe(false);
  });

  it('allows listed networks only, or anything with `any`', () => {
    const p = AddressPolicy.parse('127.0.0.0/8, ::1/128');
    expect(p.allows('127.0.0.1')).toBe(true);
    expect(p.allows('::1')).toBe(true);
    expect(p.allows('10.0.0.1')).toBe(false);
    expect(p.allows('169.254.169.254')).toBe(false);
    const host = AddressPolicy.parse(['10.0.0.5']);
    expect(host.allows('10.0.0.5')).toBe(true);
    expect(host.allows('10.0.0.6')).toBe(false);
    expect(AddressPolicy.parse('any').allows('169.254.169.254')).toBe(true);
    expect(AddressPolicy.parse('').allows('127.0.0.1')).toBe(false);
    expect(() => AddressPolicy.parse('10.0.0.0/33')).toThrow(InvalidNetworkError);
    expect(() => AddressPolicy.parse('localhost')).toThrow(InvalidNetworkError);
    expect(() => AddressPolicy.parse('any,10.0.0.0/8')).toThrow(InvalidNetworkError);
  });
});

describe('outboundRequest', () => {
  let server: Server;
  let port: number;
  let hits = 0;
  beforeAll(async () => {
    server = createServer((req, res) => {
      hits++;
      if (req.url === '/redirect') {
        res.writeHead(302, { location: 'http://169.254.169.254/' }).end();
        return;
      }
      res.end('pong');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  it('refuses loopback literals and names that resolve to loopback unless allowed', async () => {
    const before = hits;
    const deny = AddressPolicy.publicOnly();
    await expect(outboundRequest(`http://127.0.0.1:${port}/`, { policy: deny })).rejects.toBeInstanceOf(OutboundAddressError);
    await expect(outboundRequest(`http://localhost:${port}/`, { policy: deny })).rejects.toBeInstanceOf(OutboundAddressError);
    await expect(assertUrlAllowed(`http://localhost:${port}/`, deny)).rejects.toBeInstanceOf(OutboundAddressError);
    expect(hits).toBe(before); // nothing reached the server

    const allow = AddressPolicy.parse('127.0.0.0/8,::1/128');
    const res = await outboundRequest(`http://127.0.0.1:${port}/`, { policy: allow });
    expect(res.status).toBe(200);
    expect(res.body.toString()).toBe('pong');
    await assertUrlAllowed(`http://127.0.0.1:${port}/`, allow);
  });

  it('does not follow redirects', async () => {
    const res = await outboundRequest(`http://127.0.0.1:${port}/redirect`, { policy: AddressPolicy.parse('any') });
    expect(res.status).toBe(302);
  });
});
