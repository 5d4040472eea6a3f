#!/usr/bin/env node
/**
 * Builds the search preview page (web/preview) into dist/preview: one bundled, minified script
 * (InstantSearch.js, instant-meilisearch and the page), its stylesheet and the HTML. Everything
 * the page needs is in that folder, so it works with no network; `search serve` serves it at `/`.
 * Run by `npm run build` (and so by `prepare` on install).
 */
import { build } from 'esbuild';
import { copyFileSync, mkdirSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const source = join(root, 'web', 'preview');
const out = join(root, 'dist', 'preview');

rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });
await build({
  // main.ts imports style.css: esbuild writes it beside the script as preview.css
  entryPoints: { preview: join(source, 'main.ts') },
  outdir: out,
  bundle: true,
  minify: true,
  format: 'esm',
  target: ['es2020'],
  platform: 'browser',
  legalComments: 'linked',
  logLevel: 'warning',
  tsconfig: join(source, 'tsconfig.json'),
});
copyFileSync(join(source, 'index.html'), join(out, 'index.html'));
