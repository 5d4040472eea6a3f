/**
 * The version story, each number named as what it is: the package version (what `--version`,
 * `GET /version`'s `pkgVersion` and npm show), and the storage format version (the `VERSION` file
 * of a database directory, which `search upgrade` moves forward).
 */
import { existsSync, readFileSync } from 'node:fs';
import { DB_FORMAT_VERSION } from '../engine/store/format.js';

interface PackageJson {
  name: string;
  version: string;
}

/** The package.json above this module: two levels up from src/cli, three from dist/src/cli. */
export function packageJson(): PackageJson {
  for (const up of ['../../package.json', '../../../package.json']) {
    const file = new URL(up, import.meta.url);
    if (existsSync(file)) return JSON.parse(readFileSync(file, 'utf8')) as PackageJson;
  }
  return { name: 'unknown', version: 'unknown' };
}

export function versionLine(): string {
  const pkg = packageJson();
  return `search ${pkg.version} (package ${pkg.name}; storage format ${DB_FORMAT_VERSION}; node ${process.version} ${process.platform}-${process.arch})`;
}
