/**
 * A byte-level fingerprint of a database directory: every key and value of every named database
 * of every LMDB environment (read raw, no decoding), plus the bytes of every other file. Two
 * directories with equal fingerprints hold exactly the same data, whatever the page layout.
 */
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { open } from 'lmdb';

export function rawState(root: string, options: { skip?: RegExp } = {}): Record<string, string> {
  const out: Record<string, string> = {};
  walk(root, root, out, options.skip);
  return out;
}

function walk(root: string, dir: string, out: Record<string, string>, skip?: RegExp): void {
  const names = readdirSync(dir);
  if (names.includes('data.mdb')) {
    Object.assign(out, envState(root, dir));
    return;
  }
  for (const name of names) {
    const path = join(dir, name);
    const rel = relative(root, path);
    if (skip?.test(rel)) continue;
    if (statSync(path).isDirectory()) walk(root, path, out, skip);
    else out[rel] = createHash('sha256').update(readFileSync(path)).digest('hex');
  }
}

function envState(root: string, dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const env = open({ path: dir, readOnly: true, maxDbs: 64, keyEncoding: 'binary', encoding: 'binary' });
  try {
    const names = [...env.getKeys()].map((k) => Buffer.from(k as Buffer).toString('utf8'));
    for (const name of names) {
      const db = env.openDB({ name, keyEncoding: 'binary', encoding: 'binary' });
      const hash = createHash('sha256');
      let count = 0;
      for (const { key, value } of db.getRange()) {
        hash.update(Buffer.from(key as Buffer)).update('\0').update(Buffer.from(value as Buffer)).update('\n');
        count++;
      }
      out[`${relative(root, dir)}#${name}`] = `${count}:${hash.digest('hex')}`;
    }
  } finally {
    env.close();
  }
  return out;
}
