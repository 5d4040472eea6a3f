import SnapshotCreate from './create.js';

/** `search snapshot` alone takes a snapshot, as `search snapshot create`. */
export default class Snapshot extends SnapshotCreate {
  static override summary = 'Take a snapshot (same as `search snapshot create`); `search snapshot import` restores one.';
}
