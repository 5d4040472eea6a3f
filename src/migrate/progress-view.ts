/**
 * What a person sees on a terminal while a migration runs: listr2 steps per collection and a
 * cli-progress bar (points, points/s, ETA) while points are copied. Everything goes to stderr, so
 * stdout carries only the summary or the JSON report. Not used when stderr is not a TTY or with
 * `--json`: machine-readable runs get no progress noise.
 */
import cliProgress from 'cli-progress';
import { Listr, ProcessOutput } from 'listr2';
import type { MigrationEvent } from './pipeline.js';

type Phase = 'config' | 'settings' | 'documents' | 'verify' | 'swap';
const PHASES: Phase[] = ['config', 'settings', 'documents', 'verify', 'swap'];
const TITLES: Record<Phase, string> = {
  config: 'Read collection config, aliases and exact count',
  settings: 'Create the index and apply settings',
  documents: 'Copy points',
  verify: 'Verify count and sampled documents',
  swap: 'Swap the new index in',
};

interface Deferred {
  promise: Promise<'ran' | 'skipped'>;
  resolve: (v: 'ran' | 'skipped') => void;
  reject: (e: Error) => void;
  settled: boolean;
}

function deferred(): Deferred {
  let resolve!: Deferred['resolve'];
  let reject!: Deferred['reject'];
  const promise = new Promise<'ran' | 'skipped'>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  promise.catch(() => undefined);
  return { promise, resolve, reject, settled: false };
}

class CollectionSteps {
  private readonly steps = new Map<Phase, Deferred>(PHASES.map((p) => [p, deferred()]));
  private current: Phase | null = null;
  readonly run: Promise<unknown>;

  constructor(collection: string) {
    const listr = new Listr(
      [
        {
          title: `Migrate ${collection}`,
          task: (_ctx, parent) =>
            parent.newListr(
              PHASES.map((p) => ({
                title: TITLES[p],
                task: async (_c: unknown, task: { skip: (m?: string) => void }) => {
                  if ((await this.steps.get(p)!.promise) === 'skipped') task.skip(`${TITLES[p]} (not needed)`);
                },
              })),
              { concurrent: false },
            ),
        },
      ],
      { renderer: 'simple', rendererOptions: { timer: { condition: true, format: () => (s: string) => s, field: (t: number) => `${Math.round(t / 100) / 10}s` } } as never, processOutput: new ProcessOutput(process.stderr, process.stderr) } as never,
    );
    this.run = listr.run().catch(() => undefined);
  }

  enter(phase: Phase): void {
    for (const p of PHASES) {
      if (p === phase) break;
      this.settle(p, p === this.current ? 'ran' : 'skipped');
    }
    if (this.current && this.current !== phase) this.settle(this.current, 'ran');
    this.current = phase;
  }

  finish(error?: Error): void {
    for (const p of PHASES) {
      const d = this.steps.get(p)!;
      if (d.settled) continue;
      if (error && p === this.current) {
        d.settled = true;
        d.reject(error);
      } else this.settle(p, p === this.current ? 'ran' : 'skipped');
    }
  }

  private settle(p: Phase, v: 'ran' | 'skipped'): void {
    const d = this.steps.get(p)!;
    if (d.settled) return;
    d.settled = true;
    d.resolve(v);
  }
}

export class ProgressView {
  private steps: CollectionSteps | null = null;
  private bar: cliProgress.SingleBar | null = null;
  private readonly runs: Array<Promise<unknown>> = [];
  private startedAt = 0;
  private startValue = 0;

  onEvent = (e: MigrationEvent): void => {
    switch (e.type) {
      case 'phase':
        if (e.phase === 'config') {
          this.steps?.finish();
          this.steps = new CollectionSteps(e.collection);
          this.runs.push(this.steps.run);
        }
        if (e.phase !== 'documents') this.stopBar();
        this.steps?.enter(e.phase);
        break;
      case 'collection':
        this.startBar(e.total, e.resumedAt);
        break;
      case 'progress':
        this.bar?.update(e.points, { rate: this.rate(e.points) });
        break;
      case 'retry':
        process.stderr.write(`\n  retry ${e.attempt} in ${e.delayMs} ms: ${e.reason}\n`);
        break;
    }
  };

  async close(error?: Error): Promise<void> {
    this.stopBar();
    this.steps?.finish(error);
    await Promise.all(this.runs);
  }

  private startBar(total: number, start: number): void {
    this.stopBar();
    this.startedAt = Date.now();
    this.startValue = start;
    this.bar = new cliProgress.SingleBar(
      {
        stream: process.stderr,
        format: '  {bar} {percentage}% | {value}/{total} points | {rate} points/s | ETA {eta_formatted}',
        etaBuffer: 20,
        hideCursor: true,
        clearOnComplete: false,
      },
      cliProgress.Presets.shades_classic,
    );
    this.bar.start(total, start, { rate: 0 });
  }

  private stopBar(): void {
    if (!this.bar) return;
    this.bar.stop();
    this.bar = null;
  }

  private rate(points: number): number {
    const s = (Date.now() - this.startedAt) / 1000;
    return s > 0 ? Math.round((points - this.startValue) / s) : 0;
  }
}
