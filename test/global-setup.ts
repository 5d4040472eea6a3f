import { execSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';

/**
 * Compile `dist/` (what the CLI binary runs, and the preview page it serves) before any test file starts, so that `npm test` is
 * right straight after a clone or an edit. Type errors do not stop the emit here; they fail the
 * dedicated typecheck test instead, with the compiler's message.
 */
export default function setup(): void {
  if (process.env.SEARCH_SKIP_BUILD === '1') return;
  const root = join(dirname(fileURLToPath(import.meta.url)), '..');
  try {
    execSync('npx tsc -p tsconfig.json', { cwd: root, stdio: 'pipe' });
  } catch {
    // reported by test/typecheck.test.ts
  }
  execSync('npx oclif manifest', { cwd: root, stdio: 'pipe' });
  // the search preview page (dist/preview), which `search serve` serves at `/`
  execSync('node web/build.mjs', { cwd: root, stdio: 'pipe' });
}
