/**
 * Every failure leaves the server as `{message, code, type, link}` with the status of its code.
 * SearchErrors map one to one; fastify's own errors (oversized body, unreadable URL, aborted
 * body) are translated to the reference's codes; anything else is an `internal` 500 whose body
 * never carries a stack or a path, while the log keeps the cause.
 */
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { SearchError, toSearchError } from '../engine/errors.js';

/** `100 MB` as the reference prints a size: the largest binary unit, e.g. `95.367431640625 MiB`. */
export function formatBinarySize(bytes: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${value} ${units[unit]}`;
}

export function payloadTooLarge(limit: number): SearchError {
  return new SearchError(
    'payload_too_large',
    `The provided payload reached the size limit. The maximum accepted payload size is ${formatBinarySize(limit)}.`,
  );
}

export function notFound(): SearchError {
  return new SearchError('not_found', 'Not found.');
}

/** Translate whatever a handler or fastify threw into the SearchError to answer with. */
export function toResponseError(error: unknown, payloadLimit: number): SearchError {
  if (error instanceof SearchError) return error;
  const fastifyError = error as Partial<FastifyError> | undefined;
  switch (fastifyError?.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return payloadTooLarge(payloadLimit);
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new SearchError('bad_request', 'The provided payload is incomplete and cannot be parsed.');
    case 'FST_ERR_BAD_URL':
    case 'FST_ERR_ASYNC_CONSTRAINT':
      return new SearchError('bad_request', 'The request URL is malformed.');
    default:
      break;
  }
  // Request-level failures reported by node's HTTP stack (aborted upload, bad encoding).
  const status = fastifyError?.statusCode;
  if (typeof status === 'number' && status >= 400 && status < 500)
    return new SearchError('bad_request', fastifyError?.message ?? 'Bad request.');
  return toSearchError(error);
}

/** How the server reports a 5xx: one line with the request id, then the stack of the cause. */
export function describeServerError(error: SearchError, request: FastifyRequest, url: string): string {
  const cause = error.cause instanceof Error ? error.cause : error;
  const stack = cause.stack ?? `${cause.name}: ${cause.message}`;
  return `${error.status} ${error.code} answering ${request.method} ${url} (request ${request.id}): ${error.message}\n${stack}`;
}

export function sendError(error: SearchError, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  // An internal error's message can contain paths or driver details; the client gets a generic one.
  const body =
    error.code === 'internal'
      ? { ...error.toJSON(), message: 'An internal error has occurred.' }
      : error.toJSON();
  return reply.code(error.status).type('application/json; charset=utf-8').send(body);
}
