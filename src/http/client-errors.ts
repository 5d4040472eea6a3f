/**
 * Requests node's HTTP parser refuses before fastify sees them (a URL or headers over 16 KiB, a
 * malformed request line, a client too slow to send its headers) are answered in the reference's
 * error format too, keeping the status the HTTP layer chose (431, 408, 400): fastify's default
 * answers `{error, message, statusCode}`.
 */
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import { SearchError } from '../engine/errors.js';

function refusal(code: string | undefined): { status: number; message: string } {
  switch (code) {
    case 'HPE_HEADER_OVERFLOW':
      return { status: 431, message: 'The request URL and headers are too large: at most 16 KiB are accepted.' };
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return { status: 408, message: 'The request was not received in time.' };
    default:
      return { status: 400, message: 'The request is malformed and cannot be parsed.' };
  }
}

export function answerClientError(error: NodeJS.ErrnoException, socket: Socket): void {
  // A reset connection or a closed socket has no one to answer.
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  if (!socket.writable) {
    socket.destroy(error);
    return;
  }
  const { status, message } = refusal(error.code);
  const body = JSON.stringify(new SearchError('bad_request', message).toJSON());
  socket.write(
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
  socket.destroy(error);
}
