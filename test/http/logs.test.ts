/**
 * The experimental logs routes over real HTTP: the `logsRoute` gate, the reference's body errors,
 * one stream at a time that receives the events of a task processed while it is open (in the
 * `json`, `human` and `profile` formats), target filtering, DELETE ending the stream.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectErrorShape, startHarness, type Harness } from './harness.js';

let h: Harness;

beforeAll(async () => {
  // the engine emits everything; the logger's sinks decide what is written
  h = await startHarness({}, { logLevel: 'trace' });
});
afterAll(async () => {
  await h?.stop();
});

/** An open `POST /logs/stream`: what arrived so far, and a way to wait for more. */
interface OpenStream {
  status: number;
  contentType: string | null;
  text(): string;
  /** Resolves once the received text satisfies `done` (rejects if the body ends first). */
  until(done: (text: string) => boolean): Promise<string>;
  /** Resolves with everything once the server ends the body. */
  ended: Promise<string>;
}

async function openStream(body: unknown): Promise<OpenStream> {
  const response = await fetch(`${h.url}/logs/stream`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  let received = '';
  const waiters: Array<{ done: (t: string) => boolean; resolve: (t: string) => void; reject: (e: Error) => void }> = [];
  const check = () => {
    for (const w of [...waiters])
      if (w.done(received)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(received);
      }
  };
  const ended = (async () => {
    const decoder = new TextDecoder();
    for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
      received += decoder.decode(chunk, { stream: true });
      check();
    }
    for (const w of waiters.splice(0)) w.reject(new Error(`the stream ended before the expected events:\n${received}`));
    return received;
  })();
  return {
    status: response.status,
    contentType: response.headers.get('content-type'),
    text: () => received,
    until: (done) =>
      new Promise((resolve, reject) => {
        waiters.push({ done, resolve, reject });
        check();
      }),
    ended,
  };
}

const enableLogs = (on: boolean) => h.request('PATCH', '/experimental-features', { json: { logsRoute: on } });

async function createIndex(uid: string): Promise<number> {
  const created = await h.request('POST', '/indexes', { json: { uid } });
  expect(created.status).toBe(202);
  await h.wait(created.body.taskUid);
  return created.body.taskUid as number;
}

describe('the logsRoute gate', () => {
  it('refuses the three routes with feature_not_enabled while off', async () => {
    await enableLogs(false);
    const message =
      'Modifying logs through the `/logs/*` routes requires enabling the `logs route` experimental feature. See https://github.com/orgs/meilisearch/discussions/721';
    for (const [method, path, json] of [
      ['POST', '/logs/stream', {}],
      ['DELETE', '/logs/stream', undefined],
      ['POST', '/logs/stderr', {}],
    ] as const) {
      const r = await h.request(method, path, json === undefined ? {} : { json });
      expect(r.status, `${method} ${path}`).toBe(400);
      expectErrorShape(r.body, 'feature_not_enabled');
      expect(r.body.message).toBe(message);
    }
  });
});

describe('bad bodies (checked before the feature, as in the reference)', () => {
  const post = (path: string, json: unknown) => h.request('POST', path, { json });
  it.each([
    [{ target: true }, 'bad_request', 'Invalid value type at `.target`: expected a string, but found a boolean: `true`'],
    [{ target: [] }, 'bad_request', 'Invalid value type at `.target`: expected a string, but found an array: `[]`'],
    [
      { target: '' },
      'bad_request',
      'Invalid value at `.target`: Empty string is not a valid target. If you want to get no logs use `OFF`. Usage: `info`, `meilisearch=info`, or you can write multiple filters in one target: `index_scheduler=info,milli=trace`',
    ],
    [{ target: '==' }, 'bad_request', "Invalid value at `.target`: invalid filter directive: too many '=' in filter directive, expected 0 or 1"],
    [{ mode: true }, 'bad_request', 'Invalid value type at `.mode`: expected a string, but found a boolean: `true`'],
    [{ mode: 'tamo' }, 'bad_request', 'Unknown value `tamo` at `.mode`: expected one of `human`, `json`, `profile`'],
    [{ profileMemory: 'tamo' }, 'bad_request', 'Invalid value type at `.profileMemory`: expected a boolean, but found a string: `"tamo"`'],
    [
      { profileMemory: true },
      'invalid_settings_typo_tolerance',
      'Invalid value: `profile_memory` can only be used while profiling code and is not compatible with the Human mode.',
    ],
    [{ mode: 'fmt', profileMemory: true }, 'bad_request', 'Unknown value `fmt` at `.mode`: expected one of `human`, `json`, `profile`'],
    [{ level: 'info' }, 'bad_request', 'Unknown field `level`: expected one of `target`, `mode`, `profileMemory`'],
  ])('POST /logs/stream %j', async (body, code, message) => {
    const r = await post('/logs/stream', body);
    expect(r.status).toBe(400);
    expectErrorShape(r.body, code);
    expect(r.body.message).toBe(message);
  });

  it('POST /logs/stderr checks its target the same way and knows no other field', async () => {
    const level = await post('/logs/stderr', { target: 'search=loud' });
    expect(level.status).toBe(400);
    expectErrorShape(level.body, 'bad_request');
    expect(level.body.message).toMatch(/^Invalid value at `\.target`: error parsing level filter/);
    const unknown = await post('/logs/stderr', { mode: 'json' });
    expect(unknown.status).toBe(400);
    expect(unknown.body.message).toBe('Unknown field `mode`: expected one of `target`');
  });
});

describe('with logsRoute on', () => {
  beforeAll(async () => {
    expect((await enableLogs(true)).status).toBe(200);
    // keep this test's own stderr quiet; also shows the route answers 204
    const quiet = await h.request('POST', '/logs/stderr', { json: { target: 'off' } });
    expect(quiet.status).toBe(204);
    expect(quiet.text).toBe('');
  });

  it('DELETE /logs/stream answers 204 when nobody listens', async () => {
    expect((await h.request('DELETE', '/logs/stream')).status).toBe(204);
  });

  it('streams json lines for a task processed while open, refuses a second stream, and DELETE ends it', async () => {
    const stream = await openStream({ mode: 'json', target: 'search::tasks=info' });
    expect(stream.status).toBe(200);
    expect(stream.contentType).toMatch(/ndjson/);

    const second = await h.request('POST', '/logs/stream', { json: {} });
    expect(second.status).toBe(400);
    expectErrorShape(second.body, 'bad_request');
    expect(second.body.message).toBe('The `/logs/stream` route is currently in use by someone else.');

    const uid = await createIndex('logged');
    await stream.until((text) => text.includes('"batch committed"'));
    const lines = stream.text().trim().split('\n').map((line) => JSON.parse(line));
    for (const line of lines) {
      expect(line.timestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
      expect(['ERROR', 'WARN', 'INFO']).toContain(line.level);
      expect(line.target).toBe('search::tasks');
      expect(typeof line.fields.message).toBe('string');
    }
    const task = lines.find((line) => line.fields.taskUid === uid);
    expect(task).toMatchObject({ level: 'INFO', fields: { type: 'indexCreation', status: 'succeeded', indexUid: 'logged' } });
    expect(typeof task.fields.durationMs).toBe('number');
    // debug events (the batch's start) are below this stream's level
    expect(lines.some((line) => line.level === 'DEBUG')).toBe(false);

    expect((await h.request('DELETE', '/logs/stream')).status).toBe(204);
    await stream.ended;
    // the route is free again
    const again = await openStream({ target: 'off' });
    expect(again.status).toBe(200);
    await h.request('DELETE', '/logs/stream');
    await again.ended;
  });

  it('a client that leaves frees the route', async () => {
    const leaving = new AbortController();
    const response = await fetch(`${h.url}/logs/stream`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ target: 'trace' }),
      signal: leaving.signal,
    });
    expect(response.status).toBe(200);
    leaving.abort();
    // the server notices the closed connection on its own: poll until a new stream is accepted
    for (let attempt = 0; ; attempt++) {
      const next = await openStream({ target: 'off' });
      if (next.status === 200) {
        await h.request('DELETE', '/logs/stream');
        await next.ended;
        break;
      }
      expect(attempt).toBeLessThan(100);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  });

  it('a target that excludes the task events gets none of them', async () => {
    const stream = await openStream({ mode: 'json', target: 'search::tasks=warn,search::http=info' });
    await createIndex('unlogged');
    // the request lines prove the stream was open while the task ran
    await h.request('GET', '/health');
    await stream.until((text) => text.includes('"/health"'));
    await h.request('DELETE', '/logs/stream');
    const lines = (await stream.ended).trim().split('\n').map((line) => JSON.parse(line));
    expect(lines.some((line) => line.target === 'search::http' && line.span?.route === '/indexes' && line.span?.status_code === 202)).toBe(true);
    expect(lines.some((line) => line.target === 'search::tasks')).toBe(false);
  });

  it('reads the reference crate names as ours, in the human format', async () => {
    const stream = await openStream({ mode: 'human', target: 'index_scheduler=info' });
    expect(stream.status).toBe(200);
    const uid = await createIndex('human');
    await stream.until((text) => text.includes(`task ${uid} succeeded`));
    await h.request('DELETE', '/logs/stream');
    const text = await stream.ended;
    expect(text).toMatch(new RegExp(`^\\S+Z  INFO search::tasks: task ${uid} succeeded taskUid=${uid} type=indexCreation`, 'm'));
  });

  it('the profile mode writes tracing-trace entries: threads, callsites, and the batch as a span', async () => {
    const stream = await openStream({ mode: 'profile', target: 'search::tasks=info', profileMemory: true });
    await createIndex('profiled');
    await stream.until((text) => text.includes('"SpanClose"'));
    await h.request('DELETE', '/logs/stream');
    const text = await stream.ended;
    // one JSON object after the other, without separators, as the reference writes them
    const entries = JSON.parse(`[${text.replace(/\}\{/g, '},{')}]`) as Array<Record<string, any>>;
    const kinds = entries.map((entry) => Object.keys(entry)[0]);
    expect(kinds).toEqual(expect.arrayContaining(['NewThread', 'NewCallsite', 'Event', 'NewSpan', 'SpanEnter', 'SpanExit', 'SpanClose']));
    const span = entries.find((entry) => entry.NewSpan)!.NewSpan;
    const callsite = entries.find((entry) => entry.NewCallsite?.call_id === span.call_id)!.NewCallsite;
    expect(callsite).toMatchObject({ name: 'batch', target: 'search::tasks' });
    const enter = entries.find((entry) => entry.SpanEnter?.id === span.id)!.SpanEnter;
    const exit = entries.find((entry) => entry.SpanExit?.id === span.id)!.SpanExit;
    expect(enter.time).toEqual({ secs: expect.any(Number), nanos: expect.any(Number) });
    expect(exit.time.secs * 1e9 + exit.time.nanos).toBeGreaterThanOrEqual(enter.time.secs * 1e9 + enter.time.nanos);
    expect(exit.memory.resident).toBeGreaterThan(0);
  });
});
