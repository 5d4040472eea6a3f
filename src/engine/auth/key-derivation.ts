/**
 * API key values are never stored: a key's value is HMAC-SHA256(masterKey, uid) in lowercase hex,
 * with the uid in its hyphenated lowercase form. So changing the master key invalidates every key
 * at once, and an operator can recompute a key from its uid offline.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

export function deriveKey(uid: string, masterKey: string): string {
  return createHmac('sha256', Buffer.from(masterKey, 'utf8')).update(uid.toLowerCase()).digest('hex');
}

const HEX_64 = /^[0-9a-f]{64}$/i;

/** Constant-time check that `candidate` is the key value of `uid`. */
export function keyMatches(uid: string, masterKey: string, candidate: string): boolean {
  if (!HEX_64.test(candidate)) return false;
  const expected = createHmac('sha256', Buffer.from(masterKey, 'utf8')).update(uid.toLowerCase()).digest();
  return timingSafeEqual(expected, Buffer.from(candidate, 'hex'));
}

/** Constant-time string comparison for the master key itself. */
export function secretEquals(a: string, b: string): boolean {
  const ba = Buffer.from(a, 'utf8');
  const bb = Buffer.from(b, 'utf8');
  if (ba.length !== bb.length) {
    // still spend the comparison time so that length is not trivially observable
    timingSafeEqual(ba, ba);
    return false;
  }
  return timingSafeEqual(ba, bb);
}
