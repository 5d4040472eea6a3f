/**
 * Decide, at open, whether this binary may use a database directory: same format, an older
 * format it can upgrade (only when asked to), or refuse with a message that names both versions
 * and the ways forward.
 */
import { existsSync, readdirSync } from 'node:fs';
import { SearchError } from '../../errors.js';
import { readVersion } from '../../store/database-dir.js';
import { UpgradeJournal } from './journal.js';
import { CURRENT_DB_VERSION, compareVersions, parseVersion, upgradePath } from './history.js';

export type VersionStatus =
  | { kind: 'new' }
  | { kind: 'current'; version: string }
  | { kind: 'upgrade'; from: string; to: string };

export interface VersionCheckOptions {
  /** `--experimental-dumpless-upgrade` / `--upgrade-db` was given. */
  dumplessUpgrade?: boolean;
  current?: string;
}

export function checkDatabaseVersion(dbPath: string, options: VersionCheckOptions = {}): VersionStatus {
  const current = options.current ?? CURRENT_DB_VERSION;
  // an upgrade was interrupted (kill, crash): resume it; the upgrade task starts by rolling back
  const journal = UpgradeJournal.open(dbPath);
  if (journal) {
    const state = journal.state();
    return { kind: 'upgrade', from: state.from, to: state.to };
  }
  const found = readVersion(dbPath);
  if (found === null) {
    if (existsSync(dbPath) && readdirSync(dbPath).some((name) => name === 'indexes' || name === 'tasks'))
      throw new SearchError('invalid_state', `The database at \`${dbPath}\` has no VERSION file; it may be corrupted or written by another program.`);
    return { kind: 'new' };
  }
  if (!parseVersion(found))
    throw new SearchError('invalid_state', `The VERSION file of \`${dbPath}\` holds \`${found}\`, which is not a version (expected x.y.z).`);
  if (found === current) return { kind: 'current', version: found };
  if (compareVersions(found, current) > 0)
    throw new SearchError(
      'invalid_state',
      `The database at \`${dbPath}\` is in storage format ${found}, newer than storage format ${current}, which this binary uses. ` +
        `Run a binary that uses storage format ${found} or later, or create a dump with it and import the dump here with \`--import-dump\`.`,
    );
  const path = upgradePath(found, current);
  if (path && options.dumplessUpgrade) return { kind: 'upgrade', from: found, to: current };
  const options_ = path
    ? `start with \`--experimental-dumpless-upgrade\` (alias \`--upgrade-db\`) to upgrade it in place, run \`search upgrade --db-path ${dbPath}\`, ` +
      `or create a dump with a binary that uses storage format ${found} and import it with \`--import-dump\``
    : `create a dump with a binary that uses storage format ${found} and import it with \`--import-dump\` (no dumpless upgrade exists from ${found})`;
  throw new SearchError(
    'invalid_state',
    `The database at \`${dbPath}\` is in storage format ${found} but this binary uses storage format ${current}. To upgrade, ${options_}.`,
  );
}
