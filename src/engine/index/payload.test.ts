import { mkdtempSync, rmSync, truncateSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseNdjsonDocuments, readUpdateFile, UPDATE_FILE_EXTENSION, writePayloadUpdateFile, writeUpdateFile } from './payload.js';
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

describe('payloads written as update files, a frame at a time', () => {
  // several frames of documents, CRLF line ends, blank lines, text beyond ASCII
  const lines = docs.map((doc) => JSON.stringify(doc));
  const body = lines.slice(0, 1200).join('\r\n') + '\n\n  \n' + lines.slice(1200).join('\n') + '\n';

  it('keep every NDJSON document, in order, from bytes or text', async () => {
    for (const data of [Buffer.from(body), body]) {
      const path = join(dir, `payload${UPDATE_FILE_EXTENSION}`);
      expect(writePayloadUpdateFile(path, { format: 'ndjson', data })).toBe(docs.length);
      expect(await readAll(path)).toEqual(JSON.parse(JSON.stringify(docs)));
      expect(await readAll(path)).toEqual(parseNdjsonDocuments(data));
    }
  });

  it('span several megabytes of lines the same way (decoded a megabyte at a time)', async () => {
    const many = Array.from({ length: 4 }, (_, copy) => docs.map((doc) => ({ ...doc, id: `${copy}-${String(doc.id)}` }))).flat();
    const big = many.map((doc) => JSON.stringify(doc)).join('\n');
    expect(big.length).toBeGreaterThan(3 * 1024 * 1024);
    const path = join(dir, `big${UPDATE_FILE_EXTENSION}`);
    expect(writePayloadUpdateFile(path, { format: 'ndjson', data: Buffer.from(big) })).toBe(many.length);
    expect(await readAll(path)).toEqual(JSON.parse(JSON.stringify(many)));
    const broken = big + '\n{oops}';
    expect(() => writePayloadUpdateFile(path, { format: 'ndjson', data: Buffer.from(broken) })).toThrow(`line ${many.length + 1}:`);
  });

  it('report a malformed line by its number in the whole payload', () => {
    const broken = lines.slice(0, 2100).join('\n') + '\n{oops}\n' + lines.slice(2100).join('\n');
    const path = join(dir, `broken${UPDATE_FILE_EXTENSION}`);
    expect(() => writePayloadUpdateFile(path, { format: 'ndjson', data: Buffer.from(broken) })).toThrow(/line 2101/);
    expect(() => parseNdjsonDocuments(broken)).toThrow(/line 2101/);
    expect(() => writePayloadUpdateFile(path, { format: 'ndjson', data: Buffer.from('\n \n') })).toThrow(/payload is missing/);
  });

  it('cut JSON arrays into the same frames', async () => {
    const path = join(dir, `json${UPDATE_FILE_EXTENSION}`);
    expect(writePayloadUpdateFile(path, { format: 'json', data: Buffer.from(JSON.stringify(docs)) })).toBe(docs.length);
    expect(await readAll(path)).toEqual(JSON.parse(JSON.stringify(docs)));
  });
});
