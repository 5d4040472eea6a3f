#!/usr/bin/env node
/**
 * Dumps: write and import a dump of N documents (default 100,000) with 100-d GloVe vectors
 * (`../shared/data/glove-100`), in separate processes so that each phase's peak RSS is its own.
 *
 * Peers measured in the same run:
 *   - dump    vs a plain export of the same documents (pages of getDocuments with vectors ->
 *              NDJSON -> gzip -> file): what streaming the data out costs at least;
 *   - import  vs indexing the same documents through addDocuments (10,000 per task): the normal
 *              way to build the same database.
 *
 *   node bench/dump.bench.mjs              (BENCH_DUMP_DOCS=20000 for a quick run)
 */
import { spawnSync } from 'node:child_process';
import { createWriteStream, mkdtempSync, openSync, readFileSync, readSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { once } from 'node:events';
import { createGzip } from 'node:zlib';
import { fileURLToPath } from 'node:url';

const root = join(fileURLToPath(new URL('.', import.meta.url)), '..');
const dist = (p) => join(root, 'dist/src', p);
const GLOVE = join(root, '../shared/data/glove-100');

async function phase(name, args) {
  const started = performance.now();
  const out = await PHASES[name](...args);
  return { ...out, ms: performance.now() - started, rssMB: process.resourceUsage().maxRSS / 1024 };
}

const PHASES = {
  async index(db, n) {
    const { Engine } = await import(dist('index.js'));
    const count = Number(n);
    const words = readFileSync(join(GLOVE, 'words.txt'), 'utf8').split('\n');
    const fd = openSync(join(GLOVE, 'base.f32'), 'r');
    const engine = await Engine.open({ dbPath: db, logLevel: 'off' });
    await engine.waitForTask((await engine.updateSettings('glove', { embedders: { glove: { source: 'userProvided', dimensions: 100 } } })).taskUid);
    const row = Buffer.alloc(400 * 10_000);
    for (let i = 0; i < count; i += 10_000) {
      const size = Math.min(10_000, count - i);
      readSync(fd, row, 0, size * 400, i * 400);
      const f = new Float32Array(row.buffer, row.byteOffset, size * 100);
      const docs = [];
      for (let j = 0; j < size; j++) docs.push({ id: i + j, word: words[i + j], rank: i + j, _vectors: { glove: Array.from(f.subarray(j * 100, j * 100 + 100)) } });
      const task = await engine.waitForTask((await engine.addDocuments('glove', docs)).taskUid, { timeoutMs: 3_600_000 });
      if (task.status !== 'succeeded') throw new Error(JSON.stringify(task.error));
    }
    await engine.close();
    return { docs: count };
  },
  async dump(db, file) {
    const { Engine } = await import(dist('index.js'));
    const { Ops } = await import(dist('engine/ops/service.js'));
    const engine = await Engine.open({ dbPath: db, logLevel: 'off' });
    const ops = Ops.install(engine);
    const result = await ops.dumpNow(file);
    await ops.close();
    await engine.close();
    return { docs: result.documents, bytes: result.bytes };
  },
  async export(db, file) {
    const { Engine } = await import(dist('index.js'));
    const engine = await Engine.open({ dbPath: db, logLevel: 'off' });
    const gzip = createGzip();
    const out = gzip.pipe(createWriteStream(file));
    const total = engine.indexStats('glove').numberOfDocuments;
    for (let offset = 0; offset < total; offset += 1000) {
      const page = engine.getDocuments('glove', { offset, limit: 1000, retrieveVectors: true });
      if (!gzip.write(page.results.map((d) => JSON.stringify(d)).join('\n') + '\n')) await once(gzip, 'drain');
    }
    gzip.end();
    await once(out, 'finish');
    await engine.close();
    return { docs: total, bytes: statSync(file).size };
  },
  async import(file, db) {
    const { importDump } = await import(dist('engine/ops/dump/import.js'));
    const result = await importDump(file, db);
    const { Engine } = await import(dist('index.js'));
    const engine = await Engine.open({ dbPath: db, logLevel: 'off' });
    const docs = engine.indexStats('glove').numberOfDocuments;
    await engine.close();
    if (docs !== result.documents) throw new Error(`imported ${result.documents} but the index holds ${docs}`);
    return { docs };
  },
};

function run(name, ...args) {
  const child = spawnSync(process.execPath, [fileURLToPath(import.meta.url), name, ...args], { encoding: 'utf8', maxBuffer: 1 << 24 });
  if (child.status !== 0) throw new Error(`phase ${name} failed:\n${child.stderr}`);
  return JSON.parse(child.stdout.trim().split('\n').pop());
}

if (process.argv[2] && PHASES[process.argv[2]]) {
  console.log(JSON.stringify(await phase(process.argv[2], process.argv.slice(3))));
} else {
  const n = Number(process.env.BENCH_DUMP_DOCS ?? 100_000);
  const work = mkdtempSync(join(tmpdir(), 'bench-dump-'));
  try {
    const db = join(work, 'source.ms');
    const indexed = run('index', db, String(n));
    const dumped = run('dump', db, join(work, 'bench.dump'));
    const exported = run('export', db, join(work, 'peer.ndjson.gz'));
    const imported = run('import', join(work, 'bench.dump'), join(work, 'imported.ms'));
    const rate = (r) => `${Math.round(r.docs / (r.ms / 1000)).toLocaleString('en-US')} docs/s`;
    const mb = (b) => `${(b / 2 ** 20).toFixed(1)} MiB`;
    console.log(`${n.toLocaleString('en-US')} documents, 100-d vectors (GloVe), 2 text/number fields`);
    console.log(
      `dump:   ${rate(dumped)}, ${(dumped.bytes / 2 ** 20 / (dumped.ms / 1000)).toFixed(1)} MiB/s, file ${mb(dumped.bytes)}, peak RSS ${dumped.rssMB.toFixed(0)} MB` +
        ` | vs plain NDJSON+gzip export (${rate(exported)}, peak RSS ${exported.rssMB.toFixed(0)} MB): time ${(dumped.ms / exported.ms).toFixed(2)}x, RSS ${(dumped.rssMB / exported.rssMB).toFixed(2)}x`,
    );
    console.log(
      `import: ${rate(imported)}, peak RSS ${imported.rssMB.toFixed(0)} MB` +
        ` | vs indexing the same documents with addDocuments (${rate(indexed)}, peak RSS ${indexed.rssMB.toFixed(0)} MB): time ${(imported.ms / indexed.ms).toFixed(2)}x, RSS ${(imported.rssMB / indexed.rssMB).toFixed(2)}x`,
    );
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}
