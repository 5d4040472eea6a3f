/**
 * The reference's experimental logs routes, behind the `logsRoute` feature and the `metrics.get`
 * action as there:
 * - `POST /logs/stream` (`target`, `mode`, `profileMemory`): a chunked body of log events for as
 *   long as the client stays, one client at a time;
 * - `DELETE /logs/stream`: ends that body (204, also when nobody listens);
 * - `POST /logs/stderr` (`target`): what the server writes on stderr, from now on.
 * As in the reference, the body is read and checked before the feature is.
 *
 * A slow reader never makes the server buffer without bound: past STREAM_BUFFER_BYTES waiting to
 * be read, events are dropped and counted, and the count is written once the reader catches up.
 */
import { Readable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { SearchError } from '../../engine/errors.js';
import { featureNotEnabled } from '../../engine/experimental-features.js';
import { nowMs, type LogEvent } from '../../engine/logs/event.js';
import { formatter, LOG_MODES, type LogMode } from '../../engine/logs/formats.js';
import { getSink, setSink, setStderrTargets } from '../../engine/logs/logger.js';
import { LogTargets, TargetsParseError } from '../../engine/logs/targets.js';
import type { HttpEngine } from '../engine-port.js';
import { booleanField, expectObject, invalidType, invalidValue, readJsonBody, stringField } from '../json-body.js';
import { addRoute } from '../route.js';
import { quoteList } from '../wire-values.js';

/** What the reference refuses while `logsRoute` is off. */
const LOGS_ACTION = 'Modifying logs through the `/logs/*` routes';
const ACTION = 'metrics.get';
/** Bytes of formatted events waiting for a slow client before further events are dropped. */
export const STREAM_BUFFER_BYTES = 1 << 20;

const EMPTY_TARGET =
  'Empty string is not a valid target. If you want to get no logs use `OFF`. Usage: `info`, `meilisearch=info`, or you can write multiple filters in one target: `index_scheduler=info,milli=trace`';

interface StreamRequest {
  targets: LogTargets;
  mode: LogMode;
  profileMemory: boolean;
}

function readTargets(record: Record<string, unknown>): LogTargets {
  const spec = stringField(record, 'target', 'bad_request');
  if (spec === undefined || spec === null) return LogTargets.parse('info');
  if (spec === '') throw invalidValue('.target', EMPTY_TARGET, 'bad_request');
  try {
    return LogTargets.parse(spec);
  } catch (error) {
    if (error instanceof TargetsParseError) throw invalidValue('.target', error.message, 'bad_request');
    throw error;
  }
}

function readMode(record: Record<string, unknown>): LogMode {
  const mode = record.mode;
  if (mode === undefined) return 'human';
  if (typeof mode !== 'string') throw invalidType('.mode', 'a string', mode, 'bad_request');
  if (!(LOG_MODES as readonly string[]).includes(mode))
    throw new SearchError('bad_request', `Unknown value \`${mode}\` at \`.mode\`: expected one of ${quoteList(LOG_MODES)}`);
  return mode as LogMode;
}

/** Fields are read in the order the body gives them, so the first bad one is the one reported. */
function readStreamRequest(body: unknown): StreamRequest {
  const record = expectObject(body, { fields: ['target', 'mode', 'profileMemory'] });
  let targets = LogTargets.parse('info');
  let mode: LogMode = 'human';
  let profileMemory = false;
  for (const key of Object.keys(record)) {
    if (key === 'target') targets = readTargets(record);
    else if (key === 'mode') mode = readMode(record);
    else profileMemory = booleanField(record, 'profileMemory', 'bad_request') ?? false;
  }
  if (profileMemory && mode !== 'profile') {
    const shown = mode === 'human' ? 'Human' : 'Json';
    // the reference's validator reports this under that code
    throw new SearchError(
      'invalid_settings_typo_tolerance',
      `Invalid value: \`profile_memory\` can only be used while profiling code and is not compatible with the ${shown} mode.`,
    );
  }
  return { targets, mode, profileMemory };
}

/** The body of a `POST /logs/stream` answer: the `stream` sink's output, until DELETE or the client leaves. */
function openStream(request: StreamRequest): Readable {
  const format = formatter(request.mode, nowMs(), request.profileMemory);
  let dropped = 0;
  const body = new Readable({
    read() {
      if (dropped === 0) return;
      const notice = format({
        time: nowMs(),
        level: 'warn',
        target: 'search::logs',
        message: `dropped ${dropped} events: the client read more slowly than they came`,
        fields: { dropped },
        thread: 'main',
      });
      dropped = 0;
      body.push(notice);
    },
  });
  const sink = {
    targets: request.targets,
    write: (event: LogEvent) => {
      if (body.readableLength > STREAM_BUFFER_BYTES) {
        dropped++;
        return;
      }
      body.push(format(event));
    },
  };
  setSink('stream', sink);
  streams.set(sink, body);
  // whichever comes first: DELETE (ends the body), the client leaving (fastify destroys it)
  const release = () => {
    if (getSink('stream') === sink) setSink('stream', null);
    streams.delete(sink);
  };
  body.on('close', release);
  body.on('end', release);
  return body;
}

const streams = new Map<object, Readable>();

function stopStream(): void {
  const sink = getSink('stream');
  if (!sink) return;
  setSink('stream', null);
  streams.get(sink)?.push(null);
}

export function logsRoutes(app: FastifyInstance, engine: HttpEngine): void {
  const checkFeature = () => {
    if (!engine.getExperimentalFeatures().logsRoute) throw featureNotEnabled('logsRoute', LOGS_ACTION);
  };
  addRoute(app, {
    method: 'POST',
    url: '/logs/stream',
    action: ACTION,
    handler: ({ request, reply }) => {
      const wanted = readStreamRequest(readJsonBody(request));
      checkFeature();
      if (getSink('stream')) throw new SearchError('bad_request', 'The `/logs/stream` route is currently in use by someone else.');
      reply.type(wanted.mode === 'json' ? 'application/x-ndjson' : wanted.mode === 'profile' ? 'application/json' : 'text/plain; charset=utf-8');
      const body = openStream(wanted);
      // fastify writes the head with the first chunk; a client waits for it before reading: send it now
      body.once('resume', () => {
        if (!reply.raw.headersSent) reply.raw.flushHeaders();
      });
      return reply.send(body);
    },
  });
  addRoute(app, {
    method: 'DELETE',
    url: '/logs/stream',
    action: ACTION,
    handler: ({ reply }) => {
      checkFeature();
      stopStream();
      reply.code(204);
      return reply.send();
    },
  });
  addRoute(app, {
    method: 'POST',
    url: '/logs/stderr',
    action: ACTION,
    handler: ({ request, reply }) => {
      const record = expectObject(readJsonBody(request), { fields: ['target'] });
      const targets = readTargets(record);
      checkFeature();
      setStderrTargets(targets);
      reply.code(204);
      return reply.send();
    },
  });
}

