/**
 * Document payloads: parse JSON, NDJSON and CSV bodies into documents and persist them as an
 * update file (fsynced) before the task is acknowledged. Format errors are reported at
 * once (`malformed_payload`, `missing_payload`); per-document errors (ids, geo, vectors) surface
 * when the task is processed, as in the reference.
 */
import { closeSync, createReadStream, fsyncSync, openSync, writeSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import { Packr } from 'msgpackr';
import { parse as parseCsv } from 'csv-parse/sync';
import { SearchError } from '../errors.js';
import type { Document, DocumentPayload } from '../types.js';
import { NESTING_DETAIL, nestedDeeperThan } from '../wire/json-depth.js';

function asText(data: Buffer | string): string {
  return typeof data === 'string' ? data : data.toString('utf8');
}

function malformed(format: string, detail: string): SearchError {
  return new SearchError('malformed_payload', `The \`${format}\` payload provided is malformed. \`${detail}\`.`);
}

function missing(format: string): SearchError {
  return new SearchError('missing_payload', `A ${format} payload is missing.`);
}

function requireObject(value: unknown, format: string, where: string): Document {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    const kind = value === null ? 'null' : Array.isArray(value) ? 'a sequence' : typeof value;
    throw malformed(format, `${where}: invalid type: ${kind}, expected a map`);
  }
  return value as Document;
}

export function parseJsonDocuments(data: Buffer | string): Document[] {
  const text = asText(data);
  if (text.trim() === '') throw missing('json');
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw malformed('json', (error as Error).message);
  }
  if (nestedDeeperThan(value)) throw malformed('json', NESTING_DETAIL);
  if (Array.isArray(value)) return value.map((doc, i) => requireObject(doc, 'json', `document ${i}`));
  return [requireObject(value, 'json', 'payload')];
}

export function parseNdjsonDocuments(data: Buffer | string): Document[] {
  // one frame holding every document
  for (const all of ndjsonFrames(data, Infinity)) return all;
  throw missing('ndjson');
}

/** Bytes of an NDJSON payload decoded at once (cut at a line end): lines are split in a string, cheaper than decoding each. */
const NDJSON_TEXT_CHUNK = 1 << 20;

/** The text of an NDJSON payload, a run of whole lines at a time (a line longer than a chunk comes whole). */
function* ndjsonTexts(data: Buffer | string): Generator<string> {
  if (typeof data === 'string') {
    yield data;
    return;
  }
  let start = 0;
  while (start < data.length) {
    let end = start + NDJSON_TEXT_CHUNK >= data.length ? data.length : data.lastIndexOf(0x0a, start + NDJSON_TEXT_CHUNK);
    if (end < start) end = data.indexOf(0x0a, start + NDJSON_TEXT_CHUNK);
    if (end < 0) end = data.length;
    yield data.toString('utf8', start, end);
    start = end + 1;
  }
}

/**
 * The documents of an NDJSON payload in frames of up to `frame`, decoded a megabyte of lines at a
 * time: the payload is never decoded whole nor held as documents all at once (a 12 MB payload of
 * 20,000 documents parsed whole held its text, its lines and every document: 100+ MiB of heap
 * in the intake thread, per payload). Line numbers in errors are those of the whole payload.
 */
export function* ndjsonFrames(data: Buffer | string, frame: number): Generator<Document[]> {
  let docs: Document[] = [];
  let any = false;
  let lineNumber = 0;
  for (const text of ndjsonTexts(data)) {
    for (const raw of text.split('\n')) {
      lineNumber++;
      const line = raw.trim();
      if (line === '') continue;
      let values: unknown[];
      try {
        values = [JSON.parse(line)];
      } catch (error) {
        const run = concatenatedObjects(line);
        if (!run) throw malformed('ndjson', `line ${lineNumber}: ${(error as Error).message}`);
        values = run;
      }
      for (const value of values) {
        if (nestedDeeperThan(value)) throw malformed('ndjson', `line ${lineNumber}: ${NESTING_DETAIL}`);
        docs.push(requireObject(value, 'ndjson', `line ${lineNumber}`));
        any = true;
        if (docs.length >= frame) {
          yield docs;
          docs = [];
        }
      }
    }
  }
  if (!any) throw missing('ndjson');
  if (docs.length > 0) yield docs;
}

/**
 * Objects written back to back on one line (`{"id":1}{"id":2}`, or separated by spaces): the
 * reference reads NDJSON as a stream of JSON values, and its own export sends documents so. Null
 * when the line is not such a run (the caller then reports the line's own parse error).
 */
function concatenatedObjects(line: string): unknown[] | null {
  const out: unknown[] = [];
  let depth = 0;
  let start = -1;
  let inString = false;
  let escaped = false;
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (inString) {
      if (escaped) escaped = false;
      else if (c === '\\') escaped = true;
      else if (c === '"') inString = false;
    } else if (c === '"') {
      if (depth === 0) return null;
      inString = true;
    } else if (c === '{' || c === '[') {
      if (depth === 0) start = i;
      depth++;
    } else if (c === '}' || c === ']') {
      if (--depth < 0) return null;
      if (depth === 0) {
        try {
          out.push(JSON.parse(line.slice(start, i + 1)));
        } catch {
          return null;
        }
      }
    } else if (depth === 0 && c !== ' ' && c !== '\t' && c !== '\r') return null;
  }
  return depth === 0 && out.length > 1 ? out : null;
}

type CsvType = 'string' | 'number' | 'boolean';

function csvHeader(raw: string): { name: string; type: CsvType } {
  const match = /^(.*):(string|number|boolean)$/.exec(raw);
  if (match) return { name: match[1]!, type: match[2] as CsvType };
  return { name: raw, type: 'string' };
}

function csvValue(value: string, type: CsvType, line: number, column: string): unknown {
  if (value === '') return null;
  if (type === 'number') {
    const n = Number(value.trim());
    if (!Number.isFinite(n)) throw malformed('csv', `line ${line}: the value \`${value}\` of column \`${column}\` is not a number`);
    return n;
  }
  if (type === 'boolean') {
    const v = value.trim().toLowerCase();
    if (v === 'true') return true;
    if (v === 'false') return false;
    throw malformed('csv', `line ${line}: the value \`${value}\` of column \`${column}\` is not a boolean`);
  }
  return value;
}

export function parseCsvDocuments(data: Buffer | string, delimiter = ','): Document[] {
  const text = asText(data);
  if (text.trim() === '') throw missing('csv');
  if (delimiter.length !== 1 || delimiter.charCodeAt(0) > 127)
    throw new SearchError('invalid_document_csv_delimiter', 'Invalid value in parameter `csvDelimiter`: expected a string of one ASCII character.');
  let rows: string[][];
  try {
    rows = parseCsv(text, { delimiter, relax_column_count: false, bom: true, skip_empty_lines: true }) as string[][];
  } catch (error) {
    throw malformed('csv', (error as Error).message);
  }
  const [header, ...body] = rows;
  if (!header) throw missing('csv');
  const columns = header.map(csvHeader);
  return body.map((row, r) => {
    const doc: Document = {};
    columns.forEach((column, c) => {
      doc[column.name] = csvValue(row[c] ?? '', column.type, r + 2, column.name);
    });
    return doc;
  });
}

export function parseDocumentPayload(payload: DocumentPayload): Document[] {
  switch (payload.format) {
    case 'json':
      return parseJsonDocuments(payload.data);
    case 'ndjson':
      return parseNdjsonDocuments(payload.data);
    case 'csv':
      return parseCsvDocuments(payload.data, payload.csvDelimiter);
  }
}

/**
 * The payload's documents in frames of up to `frame`: NDJSON streamed line by line (see
 * `ndjsonFrames`); JSON and CSV parsed whole, then cut.
 */
export function* documentFrames(payload: DocumentPayload, frame: number): Generator<Document[]> {
  if (payload.format === 'ndjson') {
    yield* ndjsonFrames(payload.data, frame);
    return;
  }
  const documents = parseDocumentPayload(payload);
  for (let i = 0; i < documents.length; i += frame) yield documents.slice(i, i + frame);
}

/**
 * Update files. The engine writes MessagePack (`.mpk`): frames of `u32 LE length` + a MessagePack
 * array of up to UPDATE_FRAME documents. Decoding it is about five times faster than JSON for
 * documents that carry vectors (100 floats as text cost more than the rest of a document).
 * Update files named `.ndjson` (imported from a dump) hold one JSON document per line.
 */
export const UPDATE_FILE_EXTENSION = '.mpk';
const UPDATE_FRAME = 1000;
const packr = new Packr({ useRecords: false });

/** Write documents as an update file (format by the name's extension) and fsync it: after this returns they survive a crash. */
export function writeUpdateFile(path: string, documents: readonly Document[]): void {
  function* frames(): Generator<readonly Document[]> {
    for (let i = 0; i < documents.length; i += UPDATE_FRAME) yield documents.slice(i, i + UPDATE_FRAME);
  }
  writeUpdateFrames(path, frames());
}

/**
 * Parse a payload and write its documents as an update file (fsynced), a frame at a time, so that
 * only one frame of documents is alive at once; returns how many documents there were. A format
 * error throws (the caller removes the partly written file).
 */
export function writePayloadUpdateFile(path: string, payload: DocumentPayload): number {
  let count = 0;
  writeUpdateFrames(
    path,
    (function* () {
      for (const frame of documentFrames(payload, UPDATE_FRAME)) {
        count += frame.length;
        yield frame;
      }
    })(),
  );
  return count;
}

function writeUpdateFrames(path: string, frames: Iterable<readonly Document[]>): void {
  const ndjson = path.endsWith('.ndjson');
  const fd = openSync(path, 'w');
  try {
    for (const chunk of frames) {
      if (ndjson) writeSync(fd, chunk.map((doc) => JSON.stringify(doc)).join('\n') + '\n');
      else {
        const body = packr.pack(chunk);
        const head = Buffer.allocUnsafe(4);
        head.writeUInt32LE(body.length, 0);
        writeSync(fd, head);
        writeSync(fd, body);
      }
    }
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** Stream the documents of an update file, one at a time. */
export async function* readUpdateFile(path: string): AsyncGenerator<Document> {
  if (path.endsWith('.ndjson')) {
    const lines = createInterface({ input: createReadStream(path, { encoding: 'utf8' }), crlfDelay: Infinity });
    for await (const line of lines) {
      if (line.length > 0) yield JSON.parse(line) as Document;
    }
    return;
  }
  const file = await open(path, 'r');
  try {
    const head = Buffer.alloc(4);
    let at = 0;
    for (;;) {
      const { bytesRead } = await file.read(head, 0, 4, at);
      if (bytesRead === 0) return;
      if (bytesRead < 4) throw new Error(`update file ${path} is truncated`);
      const body = Buffer.allocUnsafe(head.readUInt32LE(0));
      if ((await file.read(body, 0, body.length, at + 4)).bytesRead < body.length) throw new Error(`update file ${path} is truncated`);
      at += 4 + body.length;
      for (const doc of packr.unpack(body) as Document[]) yield doc;
    }
  } finally {
    await file.close();
  }
}
