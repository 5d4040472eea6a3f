import { execSync } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';

/** Make sure `dist/` (used by the CLI binary) is fresh: `npm test` must work straight after a clone. */
export default function setup(): void {
  const root = join(dirname(fileURLToPath(import.meta.url)), '..');
  if (process.env.SEARCH_SKIP_BUILD === '1' && existsSync(join(root, 'dist'))) return;
  if (!existsSync(join(root, 'dist', 'commands')) || statSync(join(root, 'dist')).mtimeMs < Date.now() - 1000 * 60 * 60 * 24 * 365) {
    execSync('npm run build', { cwd: root, stdio: 'inherit' });
  }
}
