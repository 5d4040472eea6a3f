import { mkdtempSync, rmSync, truncateSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readUpdateFile, UPDATE_FILE_EXTENSION, writeUpdateFile } from './payload.js';
import type { Document } from '../types.js';
import { movies as filmsFixture } from '../../../test/data.js';

const dir = mkdtempSync(join(tmpdir(), 'update-files-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const movies: Document[] = filmsFixture().slice(0, 2500);
const docs: Document[] = movies.map((m, i) => ({
  ...m,
  // Values JSON carries: vectors of doubles, big and negative numbers, nested objects, nulls.
  _vectors: { default: [i / 7, -1e-7 * i, 1.7976931348623157e308, 2 ** 53 + 2, -0.1] },
  extra: { nested: [null, true, { deep: 'ünïcødé 東京' }], big: 18446744073709551615 },
}));

async function readAll(path: string): Promise<Document[]> {
  const out: Document[] = [];
  for await (const doc of readUpdateFile(path)) out.push(doc);
  return out;
}

describe('update files', () => {
  it('give back exactly the documents written, in order, in both formats', async () => {
    for (const ext of [UPDATE_FILE_EXTENSION, '.ndjson']) {
      const path = join(dir, `docs${ext}`);
      writeUpdateFile(path, docs);
      // Through JSON: what a payload's documents are (and what the NDJSON format keeps).
      expect(await readAll(path)).toEqual(JSON.parse(JSON.stringify(docs)));
    }
    expect(statSync(join(dir, `docs${UPDATE_FILE_EXTENSION}`)).size).toBeLessThan(statSync(join(dir, 'docs.ndjson')).size);
  });

  it('refuse a truncated file instead of losing its tail silently', async () => {
    const path = join(dir, `cut${UPDATE_FILE_EXTENSION}`);
    writeUpdateFile(path, docs);
    truncateSync(path, statSync(path).size - 10);
    await expect(readAll(path)).rejects.toThrow(/truncated/);
  });
});
