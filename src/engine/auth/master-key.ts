/**
 * Startup rules for the master key: production refuses to start without one of at least 16 bytes;
 * development starts anyway and warns. The suggested key is random, never derived from input.
 */
import { randomBytes } from 'node:crypto';

export const MASTER_KEY_MIN_BYTES = 16;

export class MasterKeyError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'MasterKeyError';
  }
}

/** A fresh master key suggestion: 32 random bytes, base64url (no `=`, `/` or `+`). */
export function generateMasterKey(): string {
  return randomBytes(32).toString('base64url');
}

/**
 * Check the master key for the environment. Returns the warnings to print (development); throws
 * `MasterKeyError` when production cannot start. Never includes the key itself in any message.
 */
export function checkMasterKey(o: { env: 'development' | 'production'; masterKey: string | null | undefined }): string[] {
  const key = o.masterKey ?? null;
  const bytes = key === null ? 0 : Buffer.byteLength(key, 'utf8');
  if (o.env === 'production') {
    if (key === null || bytes === 0) {
      throw new MasterKeyError(
        'You must provide a master key to secure your instance in a production environment. ' +
          'It can be specified via the SEARCH_MASTER_KEY environment variable or the --master-key launch option.\n' +
          `A master key of at least ${MASTER_KEY_MIN_BYTES} bytes is required. For example, this random one: ${generateMasterKey()}`,
      );
    }
    if (bytes < MASTER_KEY_MIN_BYTES) {
      throw new MasterKeyError(
        `The master key must be at least ${MASTER_KEY_MIN_BYTES} bytes in a production environment. The provided key is only ${bytes} bytes.\n` +
          `Restart with a longer key, for example this random one: ${generateMasterKey()}`,
      );
    }
    return [];
  }
  if (key === null || bytes === 0) {
    return [
      'No master key was found. The server will accept unidentified requests. ' +
        'Set --master-key (SEARCH_MASTER_KEY) to protect it; this is required with --env production.',
    ];
  }
  if (bytes < MASTER_KEY_MIN_BYTES) {
    return [
      `The provided master key is too short (${bytes} bytes); at least ${MASTER_KEY_MIN_BYTES} bytes are required in production. ` +
        `A safer one: ${generateMasterKey()}`,
    ];
  }
  return [];
}
