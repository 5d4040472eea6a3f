/**
 * SIGINT and SIGTERM while a command waits: abort what it waits for, so that it can clean up
 * (cancel its task, remove work files) and exit with a message instead of dying mid-way. A second
 * signal is not caught again: it ends the process as usual.
 */
export interface Interruption {
  signal: AbortSignal;
  /** The exit code for the signal received (128 + its number), or null. */
  exitCode(): number | null;
  dispose(): void;
}

const CODES: Record<string, number> = { SIGINT: 130, SIGTERM: 143 };

export function onInterrupt(): Interruption {
  const controller = new AbortController();
  let received: NodeJS.Signals | null = null;
  const handler = (signal: NodeJS.Signals) => {
    received = signal;
    process.stderr.write(`\nReceived ${signal}: stopping and cleaning up...\n`);
    controller.abort();
  };
  process.once('SIGINT', handler);
  process.once('SIGTERM', handler);
  return {
    signal: controller.signal,
    exitCode: () => (received ? CODES[received]! : null),
    dispose() {
      process.off('SIGINT', handler);
      process.off('SIGTERM', handler);
    },
  };
}
