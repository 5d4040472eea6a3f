/**
 * One process per database directory: an exclusive kernel lock (flock) on `<db>/LOCK`, held
 * from the moment the engine opens the directory until it closes it. The kernel drops the lock
 * when the process dies, even by SIGKILL, so a crash never leaves a stale lock behind.
 *
 * The lock belongs to the process, not to a thread: the write thread and the search threads of
 * a server open the same directory under the lock of their parent, which is the only one to take
 * it (a write side run as a child process inherits the parent's descriptor of it). A process that opens the same directory twice (an embedding application, the tests) shares
 * its own lock, counted, and lets it go with the last close.
 */
import { closeSync, mkdirSync, openSync, readFileSync, realpathSync, ftruncateSync, writeSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { SearchError } from '../errors.js';

export const LOCK_FILE = 'LOCK';

type Flock = (fd: number, flags: 'exnb' | 'un') => void;
let flock: Flock | null = null;

/**
 * fs-ext is CommonJS with a native addon (flock(2)); Node has no file lock of its own. Its addon
 * is not context-aware, so it is loaded on first use only: in the thread that takes the lock,
 * never in the write and search threads (which open the directory with `lock: false`).
 */
function flockSync(fd: number, flags: 'exnb' | 'un'): void {
  flock ??= (createRequire(import.meta.url)('fs-ext') as { flockSync: Flock }).flockSync;
  flock(fd, flags);
}

interface Held {
  fd: number;
  count: number;
}

const held = new Map<string, Held>();

export interface DatabaseLock {
  release(): void;
  /**
   * The descriptor that holds the lock. A child process that inherits it holds the lock with this
   * one (flock belongs to the open file, not to a process): the write side's process does, so that
   * no other server opens the directory while it lives (see tasks/write-host.ts).
   */
  readonly fd: number;
}

/** The error of a second process: it names the holder and the way to reach it instead. */
export function databaseInUse(root: string, pid: number | null): SearchError {
  if (pid && !processRuns(pid))
    return new SearchError(
      'database_in_use',
      `The database at \`${root}\` is still in use by the write process of a server that ended (process ${pid}); ` +
        'it stops within moments: try again.',
    );
  const holder = pid ? `process ${pid}` : 'another process';
  return new SearchError(
    'database_in_use',
    `The database at \`${root}\` is in use by ${holder} (a \`search serve\` or another command): ` +
      'stop it first, or run this command against the running server with `--url`.',
  );
}

/**
 * Whether a process with this id runs (EPERM: it does, under another user). A zombie does not: it
 * holds no file and no lock, and it stays one until its parent reaps it, which never happens to
 * an orphan where nothing reaps (a container without an init). `search serve`'s serving child is
 * such an orphan once its command is killed (cli/process-settings.ts).
 */
export function processRuns(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
  return !zombie(pid);
}

/** Whether `pid` has exited and waits to be reaped (Linux's /proc; false where it cannot tell). */
function zombie(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) === 'Z';
  } catch {
    return false;
  }
}

/** The pid written in the lock file by its holder, if any. */
export function lockHolder(root: string): number | null {
  try {
    const pid = Number(readFileSync(join(root, LOCK_FILE), 'utf8').trim());
    return Number.isSafeInteger(pid) && pid > 0 ? pid : null;
  } catch {
    return null;
  }
}

/**
 * How long an opener waits for a lock whose holder (the pid in the file) is gone: the lock is
 * then held by the write process of a server that died (tasks/write-host.ts), which ends itself
 * within 100 ms of its parent; a restart right after a crash should not fail on that.
 */
const ORPHAN_WAIT_MS = 3000;
/**
 * How long an opener waits for a lock whose holder is alive. A server killed a moment ago may
 * still be ending: `search serve` runs itself again as a child (cli/process-settings.ts) that
 * ends when it sees its parent gone, which takes a turn of its event loop. A restart right after
 * a `kill -9` of the command should not fail on that; a server that really runs costs the second
 * opener this long before its error.
 */
const HOLDER_WAIT_MS = 1000;
const ORPHAN_POLL_MS = 50;
const PAUSE = new Int32Array(new SharedArrayBuffer(4));

/** Take the lock of `root` (creating the directory), or throw `database_in_use` (after HOLDER_WAIT_MS, or ORPHAN_WAIT_MS for an orphan, at most). */
export function lockDatabase(root: string): DatabaseLock {
  mkdirSync(root, { recursive: true });
  const key = realpathSync(root);
  const mine = held.get(key);
  if (mine) {
    mine.count++;
    return once(key);
  }
  const fd = openSync(join(root, LOCK_FILE), 'a+');
  const started = Date.now();
  for (;;) {
    try {
      flockSync(fd, 'exnb');
      break;
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      const taken = code === 'EAGAIN' || code === 'EWOULDBLOCK';
      const holder = taken ? lockHolder(root) : null;
      // a server that died a moment ago: its write process ends within its watchdog's period,
      // its serving child (when it ran itself again) at its next turn
      const patience = holder && !processRuns(holder) ? ORPHAN_WAIT_MS : HOLDER_WAIT_MS;
      if (taken && Date.now() - started < patience) {
        Atomics.wait(PAUSE, 0, 0, ORPHAN_POLL_MS);
        continue;
      }
      closeSync(fd);
      if (taken) throw databaseInUse(root, holder);
      throw new SearchError('io_error', `Cannot lock the database at \`${root}\`: ${(error as Error).message}`, { cause: error });
    }
  }
  // only the holder writes its pid, so a reader of the file only ever sees the live holder's
  ftruncateSync(fd, 0);
  try {
    writeSync(fd, `${process.pid}\n`);
  } catch (error) {
    // the pid only names the holder in others' errors: a full disk must not keep the database
    // from opening (it comes up serving reads); the lock itself is the kernel's, not the file's
    if ((error as NodeJS.ErrnoException).code !== 'ENOSPC') {
      closeSync(fd);
      throw error;
    }
  }
  held.set(key, { fd, count: 1 });
  return once(key);
}

function once(key: string): DatabaseLock {
  let released = false;
  return {
    fd: held.get(key)!.fd,
    release() {
      if (released) return;
      released = true;
      const entry = held.get(key);
      if (!entry || --entry.count > 0) return;
      held.delete(key);
      try {
        ftruncateSync(entry.fd, 0);
      } catch {
        // the directory may be gone already (a test's temp folder); the lock goes with the fd
      }
      closeSync(entry.fd);
    },
  };
}
