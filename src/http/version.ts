/**
 * `GET /version`: the commit the code was built from when it can be known (a git checkout, or
 * `SEARCH_COMMIT_SHA` / `SEARCH_COMMIT_DATE` set by a packager; `unknown` otherwise, as the
 * reference answers for builds without git metadata), and two versions:
 *
 * - `pkgVersion` is the Meilisearch version whose API we answer. Clients and integrations gate
 *   features on it (`pkgVersion >= 1.x`), so reporting our own `0.y.z` there would send them
 *   down their oldest code paths. `SEARCH_REPORTED_PKG_VERSION` overrides it for a client that
 *   needs another value.
 * - `searchVersion` is this package's own version, so that what runs stays visible.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export interface VersionInfo {
  commitSha: string;
  commitDate: string;
  pkgVersion: string;
  searchVersion: string;
}

/** The version of the Meilisearch API reference these routes follow. */
export const COMPATIBLE_MEILISEARCH_VERSION = '1.35.0';

/** The package root: two levels above this file both in `src/http` and in `dist/src/http`. */
export function packageRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 4; i++) {
    try {
      const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name?: string };
      if (pkg.name === 'search') return dir;
    } catch {
      // not here, go up
    }
    dir = dirname(dir);
  }
  return process.cwd();
}

let cached: VersionInfo | undefined;

export function versionInfo(): VersionInfo {
  if (cached) return cached;
  const root = packageRoot();
  let searchVersion = 'unknown';
  try {
    searchVersion = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string }).version;
  } catch {
    // keep unknown
  }
  let commitSha = process.env.SEARCH_COMMIT_SHA ?? 'unknown';
  let commitDate = process.env.SEARCH_COMMIT_DATE ?? 'unknown';
  if (commitSha === 'unknown') {
    try {
      const out = execFileSync('git', ['log', '-1', '--format=%H%n%cI'], {
        cwd: root,
        stdio: ['ignore', 'pipe', 'ignore'],
        timeout: 2000,
      })
        .toString()
        .trim()
        .split('\n');
      if (out.length === 2 && /^[0-9a-f]{40}$/.test(out[0]!)) {
        commitSha = out[0]!;
        commitDate = new Date(out[1]!).toISOString();
      }
    } catch {
      // not a git checkout or no git binary: keep unknown
    }
  }
  const pkgVersion = process.env.SEARCH_REPORTED_PKG_VERSION || COMPATIBLE_MEILISEARCH_VERSION;
  cached = { commitSha, commitDate, pkgVersion, searchVersion };
  return cached;
}
