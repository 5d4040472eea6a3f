/**
 * Why a migration stopped. `kind` lets the command choose an exit code and the JSON report carry
 * a stable field; the message is written for the person who runs the command.
 */
export type MigrationErrorKind =
  | 'auth' // the source or the target refused the credentials
  | 'not_found' // unknown collection
  | 'unreachable' // connection refused, DNS failure, timeout
  | 'http' // any other non-success answer after retries
  | 'config' // flags that cannot work together, unreadable settings file, unusable checkpoint
  | 'target' // the target rejected a write or a task failed
  | 'verification'; // the migrated index does not match the collection

export class MigrationError extends Error {
  constructor(
    readonly kind: MigrationErrorKind,
    message: string,
    readonly details?: Record<string, unknown>,
  ) {
    super(message);
    this.name = 'MigrationError';
  }
}
