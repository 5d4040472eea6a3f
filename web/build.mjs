#!/usr/bin/env node
/**
 * Builds the search preview page (web/preview) into dist/preview: one bundled, minified script
 * (InstantSearch.js, instant-meilisearch and the page), its stylesheet, the HTML and the licences
 * of the bundled packages. Everything the page needs is in that folder, so it works with no
 * network; `search serve` serves it at `/`. Run by `npm run build` (and so by `prepare`).
 */
import { build } from 'esbuild';
import { copyFileSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const source = join(root, 'web', 'preview');
const out = join(root, 'dist', 'preview');

/** `node_modules/@scope/name/dist/x.js` → `node_modules/@scope/name` (null: not from a package). */
function packageDirOf(input) {
  const at = input.lastIndexOf('node_modules/');
  if (at === -1) return null;
  const [first, second] = input.slice(at + 'node_modules/'.length).split('/');
  return `${input.slice(0, at)}node_modules/${first.startsWith('@') ? `${first}/${second}` : first}`;
}

/** The licence of every package bundled into the script: the minifier drops their comments. */
function thirdPartyNotices(inputs) {
  const dirs = [...new Set(inputs.map(packageDirOf).filter((dir) => dir !== null))].sort();
  const sections = dirs.map((dir) => {
    const pkg = JSON.parse(readFileSync(join(root, dir, 'package.json'), 'utf8'));
    const file = readdirSync(join(root, dir)).find((name) => /^licen[cs]e/i.test(name));
    const text = file ? readFileSync(join(root, dir, file), 'utf8').trim() : `License: ${pkg.license ?? 'see the package'}`;
    return `${pkg.name}@${pkg.version}\n\n${text}`;
  });
  return `Third-party software bundled into preview.js\n\n${sections.join(`\n\n${'-'.repeat(72)}\n\n`)}\n`;
}

rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });
const result = await build({
  absWorkingDir: root,
  // main.ts imports style.css: esbuild writes it beside the script as preview.css
  entryPoints: { preview: join(source, 'main.ts') },
  outdir: out,
  bundle: true,
  minify: true,
  format: 'esm',
  target: ['es2020'],
  platform: 'browser',
  logLevel: 'warning',
  tsconfig: join(source, 'tsconfig.json'),
  metafile: true,
});
copyFileSync(join(source, 'index.html'), join(out, 'index.html'));
// the inputs that put code into the script (not the ones a package's `browser` field disables)
const bundled = Object.values(result.metafile.outputs).flatMap((output) =>
  Object.entries(output.inputs)
    .filter(([path, { bytesInOutput }]) => bytesInOutput > 0 && !path.startsWith('('))
    .map(([path]) => path),
);
writeFileSync(join(out, 'licenses.txt'), thirdPartyNotices(bundled));
