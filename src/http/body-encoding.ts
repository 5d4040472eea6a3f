/**
 * Compressed request bodies (`Content-Encoding: gzip`, `deflate`, `br`), as the reference accepts
 * them for large document imports. The decompressed size is bounded by the payload limit, so a
 * small compressed bomb cannot expand past what an uncompressed body may weigh.
 */
import { brotliDecompressSync, gunzipSync, inflateSync } from 'node:zlib';
import { SearchError } from '../engine/errors.js';
import { payloadTooLarge } from './error-mapping.js';

const DECODERS: Record<string, (data: Buffer, o: { maxOutputLength: number }) => Buffer> = {
  gzip: gunzipSync,
  'x-gzip': gunzipSync,
  deflate: inflateSync,
  br: brotliDecompressSync,
};

export function decodeBody(encodingHeader: string | undefined, body: Buffer, limit: number): Buffer {
  const encoding = encodingHeader?.trim().toLowerCase();
  if (!encoding || encoding === 'identity') return body;
  const decode = DECODERS[encoding];
  if (!decode)
    throw new SearchError(
      'bad_request',
      `The Content-Encoding \`${encodingHeader}\` is not supported. Accepted values are: \`gzip\`, \`deflate\`, \`br\`, \`identity\`.`,
    );
  try {
    return decode(body, { maxOutputLength: limit });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE' || error instanceof RangeError) throw payloadTooLarge(limit);
    throw new SearchError('bad_request', `The payload could not be decoded as \`${encoding}\`: ${(error as Error).message}.`);
  }
}
