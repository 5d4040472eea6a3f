/**
 * `payloadSize` of `POST /export`: a byte count (integer) or a human size (`24MiB`, `50 MB`,
 * `1000`; see byte-size.ts), shown back in task details with the unit that writes it most simply
 * (`24 MiB`, `20 MB`).
 */
import { formatByteSize, readByteSize } from '../byte-size.js';

/** The reference's default when the request sets none. */
export const DEFAULT_EXPORT_PAYLOAD_BYTES = 20 * 1024 * 1024;

/** The size in whole bytes, or the reason `text` is not one (the parser's own wording). */
export function parsePayloadSize(text: string): number | { reason: string } {
  const size = readByteSize(text);
  if (typeof size !== 'number') return size;
  const bytes = Math.ceil(size);
  if (!Number.isSafeInteger(bytes)) return { reason: 'the value is too large' };
  return bytes;
}

export const formatPayloadSize = formatByteSize;
