/**
 * The on-disk format version this build writes and reads. The database directory records the
 * version that wrote it in `VERSION`; opening a database of another version needs an upgrade
 * (see src/engine/ops).
 */
import { SearchError } from '../errors.js';

export const DB_FORMAT_VERSION = '1.4.0';

export function versionMismatch(found: string, expected = DB_FORMAT_VERSION): SearchError {
  return new SearchError(
    'invalid_state',
    `Your database's storage format (${found}) is incompatible with the storage format of this binary (${expected}). ` +
      'To migrate, either start once with `--experimental-dumpless-upgrade` (alias `--upgrade-db`), run `search upgrade`, ' +
      'or create a dump with the previous version and import it with `--import-dump`.',
  );
}
