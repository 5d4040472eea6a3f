/**
 * SIGKILL in the middle of a large import (6 tasks of 1,000 movies from the films fixture, alternating
 * JSON and NDJSON): every task that was acknowledged with a 202 before the
 * kill completes after a restart, and every document is there.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, test } from 'vitest';
import { json, killAll, serve, waitTask } from './serve-process.js';
import { movies } from '../data.js';

interface Movie {
  id: number;
  title: string;
}
const MOVIES: Movie[] = movies();
const CHUNKS = 6;
const CHUNK_SIZE = 1_000;

// A server left running by a failed assertion must not outlive the test.
afterEach(killAll);

test('acknowledged tasks survive a SIGKILL mid-import and complete after restart', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'search-crash-'));
  // A small indexing budget splits the import into several batches, so that the kill lands
  // between committed and uncommitted ones.
  const args = ['--db-path', join(dir, 'data.ms'), '--log-level', 'off', '--max-indexing-memory', '1 MB'];
  const env = { PATH: process.env.PATH ?? '' };
  const first = await serve(args, env);

  const acknowledged: number[] = [];
  const size = CHUNK_SIZE;
  for (let i = 0; i < CHUNKS; i++) {
    const chunk = MOVIES.slice(i * size, (i + 1) * size);
    const ndjson = i % 2 === 1;
    const reply = await json(`${first.url}/indexes/movies/documents?primaryKey=id`, {
      method: 'POST',
      headers: { 'content-type': ndjson ? 'application/x-ndjson' : 'application/json' },
      body: ndjson ? chunk.map((m) => JSON.stringify(m)).join('\n') : JSON.stringify(chunk),
    });
    expect(reply.status).toBe(202);
    acknowledged.push(reply.body.taskUid);
  }

  // Kill as soon as the import is under way.
  let statuses: string[] = [];
  const deadline = Date.now() + 30_000;
  do {
    const { body } = await json(`${first.url}/tasks?indexUids=movies&limit=100`);
    statuses = body.results.map((t: { status: string }) => t.status);
    if (statuses.some((s) => s !== 'enqueued')) break;
    await new Promise((r) => setTimeout(r, 5));
  } while (Date.now() < deadline);
  first.process.kill('SIGKILL');
  const killed = await first.process;
  expect(killed.signal).toBe('SIGKILL');
  // The kill really interrupted the import: some acknowledged task had not finished.
  expect(statuses.filter((s) => s === 'enqueued' || s === 'processing').length).toBeGreaterThan(0);

  const second = await serve(args, env);
  try {
    for (const uid of acknowledged) {
      const task = await waitTask(second.url, uid);
      expect(task.status, JSON.stringify(task.error)).toBe('succeeded');
    }
    const stats = await json(`${second.url}/indexes/movies/stats`);
    expect(stats.body.numberOfDocuments).toBe(CHUNKS * CHUNK_SIZE);
    for (const movie of [MOVIES[0]!, MOVIES[size]!, MOVIES[CHUNKS * CHUNK_SIZE - 1]!]) {
      const doc = await json(`${second.url}/indexes/movies/documents/${movie.id}`);
      expect(doc.body).toEqual(movie);
    }
  } finally {
    second.process.kill('SIGTERM');
    await second.process;
  }
}, 240_000);
