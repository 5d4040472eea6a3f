/**
 * What `search serve` checks before it touches the database directory: an option that would
 * stop the server (a bad address, a port in use, a master key refused, a bad webhook URL or
 * network list) fails first, so a failed start never leaves a new, empty database behind.
 */
import { createServer } from 'node:net';
import { checkMasterKey } from '../engine/auth/master-key.js';
import { AddressPolicy } from '../engine/net/index.js';
import { checkWebhookUrl } from '../engine/webhooks/webhook-store.js';
import { parseHttpAddr } from '../http/server.js';
import type { ResolvedOptions } from './serve-options.js';

export class PreflightError extends Error {
  override name = 'PreflightError';
}

export async function preflight(options: ResolvedOptions): Promise<void> {
  const addr = options['http-addr'] as string;
  let host: string;
  let port: number;
  try {
    ({ host, port } = parseHttpAddr(addr));
    checkMasterKey({ env: options.env as 'development' | 'production', masterKey: (options['master-key'] as string | undefined) ?? null });
    AddressPolicy.parse((options['experimental-allowed-ip-networks'] as string | undefined) ?? null);
  } catch (error) {
    throw new PreflightError((error as Error).message);
  }
  const webhook = options['task-webhook-url'] as string | undefined;
  try {
    if (webhook) checkWebhookUrl(webhook);
  } catch (error) {
    throw new PreflightError(`Invalid \`--task-webhook-url\`: ${(error as Error).message}`);
  }
  await tryBind(host, port, addr);
}

/** Bind and release the address at once: the port is free and the address is this machine's. */
function tryBind(host: string, port: number, addr: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', (error: NodeJS.ErrnoException) =>
      reject(new PreflightError(`Cannot listen on ${addr}: ${error.code === 'EADDRINUSE' ? 'the port is in use' : error.message}`)),
    );
    probe.listen({ host, port, exclusive: true }, () => probe.close(() => resolve()));
  });
}
