/**
 * What the ops commands share, free of any CLI framework: choosing the target from the flags and
 * showing a task's progress on stderr (a live line on a terminal, state changes otherwise).
 */
import type { Task } from '../types.js';
import { LocalTarget, RemoteTarget, type OpsTarget } from './target.js';

export interface TargetFlags {
  'db-path'?: string;
  url?: string;
  'api-key'?: string;
}

export async function openTarget(flags: TargetFlags, local: { dumpDir?: string; snapshotDir?: string } = {}): Promise<OpsTarget> {
  if (flags.url) return new RemoteTarget(flags.url, flags['api-key']);
  return LocalTarget.open({ dbPath: flags['db-path'] ?? './data.ms', ...local });
}

export interface Progress {
  onPoll: (task: Task) => void;
  onStep: (step: string) => void;
  done: () => void;
}

/** How often a line repeats an unchanged state when stderr is not a terminal (cron, systemd, CI logs). */
const HEARTBEAT_MS = 10_000;

/**
 * Progress on stderr, so that stdout keeps only the result: a live line on a terminal, else
 * (cron, systemd, CI) one line per change of state and a line every 10 s while a state lasts.
 * Quiet under `--json`, which is for programs: stderr then carries only warnings and errors.
 */
export function progress(json: boolean, stream: NodeJS.WriteStream = process.stderr): Progress {
  if (json) return { onPoll: () => {}, onStep: () => {}, done: () => {} };
  const started = Date.now();
  const live = Boolean(stream.isTTY);
  const frames = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];
  let frame = 0;
  let last = '';
  let lastAt = 0;
  let shown = false;
  const clear = () => {
    if (shown) stream.write('\r\x1b[2K');
    shown = false;
  };
  return {
    onPoll(task) {
      const seconds = ((Date.now() - started) / 1000).toFixed(1);
      const text = `${task.type} task ${task.uid}: ${task.status}`;
      if (live) {
        stream.write(`\r\x1b[2K${frames[frame++ % frames.length]} ${text} (${seconds} s)`);
        shown = true;
      } else if (text !== last || Date.now() - lastAt >= HEARTBEAT_MS) {
        stream.write(`${text} (${seconds} s)\n`);
        lastAt = Date.now();
      }
      last = text;
    },
    onStep(step) {
      clear();
      stream.write(`${step}\n`);
    },
    done: clear,
  };
}

export function formatBytes(bytes: number | null): string {
  if (bytes === null) return '';
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${value.toFixed(unit === 0 ? 0 : 1)} ${units[unit]}`;
}
