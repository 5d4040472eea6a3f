/**
 * Where the script of a worker thread is.
 *
 * A worker thread runs a JavaScript file. Built, this code runs from `dist/`, where a worker's
 * compiled `.js` sits next to the compiled module that starts it, so `new URL('./x.js',
 * import.meta.url)` finds it. Under the TypeScript test runner (vitest), the module that starts
 * the worker is the `.ts` source: there is no `.js` beside it, and a worker thread could not run
 * the `.ts` anyway (it does not go through vitest's transform). Then the script is the compiled
 * one under `dist/`, at the same place relative to the repository root (`tsconfig.json`:
 * `rootDir` `.`, `outDir` `dist`); test/global-setup.ts builds `dist/` before any test starts.
 */
import path from 'node:path';
import { Worker, type WorkerOptions } from 'node:worker_threads';
import { fileURLToPath, pathToFileURL } from 'node:url';

/** Compiled sources end in `.js`; sources run by a TypeScript loader end in one of these. */
const TS_SOURCE = /\.[cm]?tsx?$/;

/**
 * The repository root, from this file's own place: `<root>/src/engine/worker-script.ts` when run
 * from source, `<root>/dist/src/engine/worker-script.js` when built.
 */
const ROOT = fileURLToPath(new URL(TS_SOURCE.test(new URL(import.meta.url).pathname) ? '../../' : '../../../', import.meta.url));

/**
 * The URL of a worker script, given the `import.meta.url` of the module that starts it and the
 * script's path relative to that module as compiled (`'./thing.worker.js'`).
 */
export function workerScriptUrl(importMetaUrl: string, relativeJsPath: string): URL {
  const caller = new URL(importMetaUrl);
  caller.search = '';
  caller.hash = '';
  const beside = new URL(relativeJsPath, caller);
  if (!TS_SOURCE.test(caller.pathname)) return beside;
  const fromRoot = path.relative(ROOT, fileURLToPath(beside));
  if (fromRoot.startsWith('..') || path.isAbsolute(fromRoot))
    throw new Error(`worker script \`${relativeJsPath}\` of ${caller.href} is outside the repository ${ROOT}: it has no compiled copy under dist/`);
  return pathToFileURL(path.join(ROOT, 'dist', fromRoot));
}

/**
 * Options of this process that a worker refused: per-process and V8 options such as
 * `--max-old-space-size=512` or `--trace-gc`. V8's options apply to every thread of the process
 * anyway, so a worker loses nothing without them.
 */
const refusedByWorkers = new Set<string>();

/**
 * Node options for a worker: the process's own, less those that only make sense for the main
 * entry (`--input-type` is refused for a worker's file entry: a script run with `node
 * --input-type=module -e ...` could not start any worker otherwise) and those a worker refused.
 */
export function workerExecArgv(): string[] {
  return process.execArgv.filter((arg) => !arg.startsWith('--input-type') && !refusedByWorkers.has(arg));
}

/**
 * A worker thread with this process's node options (loaders, conditions, source maps), less the
 * ones a worker refuses. Node refuses per-process options in a worker's `execArgv` with an error
 * instead of ignoring them, and which options are per-process depends on node's version: a
 * program started as `node --max-old-space-size=4096 app.js` could otherwise start no worker at
 * all, so could not index or search. The refused ones are learnt from the first refusal.
 */
export function startWorker(script: string | URL, options: WorkerOptions = {}): Worker {
  for (;;) {
    try {
      return new Worker(script, { ...options, execArgv: workerExecArgv() });
    } catch (error) {
      const refused = refusedOptions(error);
      if (refused.length === 0 || refused.every((option) => refusedByWorkers.has(option))) throw error;
      for (const option of refused) refusedByWorkers.add(option);
    }
  }
}

/** The options named by node's ERR_WORKER_INVALID_EXEC_ARGV, every option given when its message cannot be read; none for another error. */
function refusedOptions(error: unknown): string[] {
  if ((error as { code?: unknown } | null)?.code !== 'ERR_WORKER_INVALID_EXEC_ARGV') return [];
  const listed = /flags: (.+)$/.exec((error as Error).message)?.[1];
  return listed ? listed.split(', ') : workerExecArgv();
}

/** Options that say what the main entry is or how it runs, not how node behaves: a child must not inherit them. */
const ENTRY_OPTIONS = new Set(['-e', '--eval', '-p', '--print', '-i', '--interactive', '-c', '--check', '--test', '--watch', '--watch-path']);
/** Those of them that take the next argument as their value. */
const ENTRY_OPTIONS_WITH_VALUE = new Set(['-e', '--eval', '-p', '--print', '--watch-path']);

/**
 * Node options for a child process that runs a script of ours: the process's own, less those that
 * choose the main entry (a program run with `node -e <code>` would otherwise start a child that
 * runs <code> again instead of the script) or a test or watch mode.
 */
export function childExecArgv(execArgv = process.execArgv): string[] {
  const kept: string[] = [];
  for (let i = 0; i < execArgv.length; i++) {
    const arg = execArgv[i]!;
    const name = arg.includes('=') ? arg.slice(0, arg.indexOf('=')) : arg;
    if (ENTRY_OPTIONS_WITH_VALUE.has(name) && !arg.includes('=')) i++;
    else if (!ENTRY_OPTIONS.has(name) && !/^--(input-type|test-|watch)/.test(name)) kept.push(arg);
  }
  return kept;
}
