/**
 * JSON Lines to and from files in constant memory: the writer buffers at most a few hundred
 * kilobytes and waits for the stream to drain; the reader yields one parsed line at a time.
 */
import { createReadStream, createWriteStream, type WriteStream } from 'node:fs';
import { once } from 'node:events';
import { createInterface } from 'node:readline';

const FLUSH_AT = 256 * 1024;

export class JsonlWriter {
  private readonly stream: WriteStream;
  private buffer = '';
  count = 0;

  constructor(readonly path: string) {
    this.stream = createWriteStream(path);
  }

  async push(value: unknown): Promise<void> {
    this.buffer += JSON.stringify(value) + '\n';
    this.count++;
    if (this.buffer.length >= FLUSH_AT) await this.flush();
  }

  private async flush(): Promise<void> {
    if (!this.buffer) return;
    const ok = this.stream.write(this.buffer);
    this.buffer = '';
    if (!ok) await once(this.stream, 'drain');
  }

  async close(): Promise<void> {
    await this.flush();
    this.stream.end();
    await once(this.stream, 'finish');
  }
}

/** Write every value of `values` as one line; returns how many were written. */
export async function writeJsonl(path: string, values: AsyncIterable<unknown> | Iterable<unknown>): Promise<number> {
  const writer = new JsonlWriter(path);
  try {
    for await (const value of values) await writer.push(value);
  } finally {
    await writer.close();
  }
  return writer.count;
}

/** An integer literal of 16 digits or more: past 2^53 a JavaScript number cannot hold it exactly. */
const LONG_INTEGER = /(?:^|[:,[\s])(-?\d{16,})(?=\s*[,\]}])/g;

/**
 * Parse `path` line by line; a bad line fails with its file and line number. Integers that
 * JSON.parse cannot hold exactly (Meilisearch keeps them as u64/i64) are reported through
 * `onUnsafeInteger`, with their digits, since the value read is rounded.
 */
export async function* readJsonl<T = unknown>(path: string, label = path, onUnsafeInteger?: (line: number, digits: string) => void): AsyncGenerator<T> {
  const lines = createInterface({ input: createReadStream(path), crlfDelay: Infinity });
  let lineNo = 0;
  for await (const line of lines) {
    lineNo++;
    if (line.trim() === '') continue;
    let value: T;
    try {
      value = JSON.parse(line) as T;
    } catch (error) {
      throw new Error(`${label}, line ${lineNo}: invalid JSON (${(error as Error).message})`);
    }
    if (onUnsafeInteger && /\d{16}/.test(line))
      for (const [, digits] of line.matchAll(LONG_INTEGER)) if (!Number.isSafeInteger(Number(digits))) onUnsafeInteger(lineNo, digits!);
    yield value;
  }
}
