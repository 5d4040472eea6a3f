#!/usr/bin/env node
/**
 * `npm run bench`: run every benchmark section `bench/*.bench.js` (or `.mjs`), each in its own
 * node process so that one section's memory does not weigh on the next. Sections import the
 * compiled code from `dist/`, which is rebuilt first (set SEARCH_SKIP_BUILD=1 to skip that).
 * A TypeScript section `bench/<name>.bench.ts` runs under vitest with its own
 * `bench/<name>.vitest.config.ts` (vitest compiles it; it can import `src/` directly).
 *
 *   node bench/run.js              every section
 *   node bench/run.js indexing     sections whose file name contains "indexing"
 *
 * A section prints its own figures, each as a ratio to the peer it measured in the same run.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import os from 'node:os';

const benchDir = dirname(fileURLToPath(import.meta.url));
const root = dirname(benchDir);
const filters = process.argv.slice(2);

const sections = readdirSync(benchDir)
  .filter((name) => /\.bench\.(m?js|ts)$/.test(name))
  .filter((name) => filters.length === 0 || filters.some((f) => name.includes(f)))
  .sort();

if (sections.length === 0) {
  console.error(`No benchmark section matches ${filters.join(', ') || '(any)'} in ${benchDir}.`);
  process.exit(1);
}

if (process.env.SEARCH_SKIP_BUILD !== '1') {
  try {
    execFileSync('npx', ['tsc', '-p', 'tsconfig.json'], { cwd: root, stdio: 'inherit' });
  } catch {
    console.error('Type errors while building dist/; running the benchmarks on what was emitted.');
  }
}

console.log(`# search benchmarks — ${new Date().toISOString()}`);
console.log(`# ${os.cpus().length} cores (${os.cpus()[0]?.model ?? 'unknown cpu'}), ${Math.round(os.totalmem() / 2 ** 30)} GiB RAM, node ${process.version}`);

let failed = 0;
/** The command that runs one section: node for JavaScript, vitest (with the section's config) for TypeScript. */
function commandFor(name) {
  const stem = name.replace(/\.bench\.(m?js|ts)$/, '');
  if (!name.endsWith('.ts')) return [process.execPath, ['--expose-gc', join(benchDir, name)]];
  const config = join(benchDir, `${stem}.vitest.config.ts`);
  if (!existsSync(config)) return undefined;
  return [join(root, 'node_modules', '.bin', 'vitest'), ['run', '--config', config]];
}

for (const name of sections) {
  console.log(`\n## ${name.replace(/\.bench\.(m?js|ts)$/, '')}`);
  const command = commandFor(name);
  if (!command) {
    failed++;
    console.error(`section ${name} has no bench/${name.replace(/\.bench\.ts$/, '')}.vitest.config.ts to run it with`);
    continue;
  }
  const result = spawnSync(command[0], command[1], { cwd: root, stdio: 'inherit' });
  if (result.status !== 0) {
    failed++;
    console.error(`section ${name} failed (exit ${result.status ?? result.signal})`);
  }
}
process.exit(failed === 0 ? 0 : 1);
