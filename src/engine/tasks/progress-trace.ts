/**
 * A batch's progress trace: how long each step of its processing took, reported in the batch's
 * `stats.progressTrace` as the reference does (`"processing tasks > extracting": "12.31ms"`, the
 * total under `processing tasks`, the final write of the task records under `writing tasks to
 * disk`). Processors announce their steps through `BatchContext.progress`; a step lasts until the
 * next one starts or processing ends.
 */
import { formatDuration } from '../search/performance.js';

const PROCESSING = 'processing tasks';

export class BatchTrace {
  private readonly started = performance.now();
  private readonly spans = new Map<string, number>();
  private current: { name: string; since: number } | null = null;
  private processed: number | null = null;

  /** A processor started a step: the one before it ends here. */
  step(name: string): void {
    const now = performance.now();
    this.close(now);
    this.current = { name, since: now };
  }

  /** The processor returned: its last step and the processing total end here. */
  processingDone(): void {
    const now = performance.now();
    this.close(now);
    this.processed = now - this.started;
  }

  /** The trace, once the task records are written (`writeMs` is how long that took). */
  view(writeMs: number): Record<string, string> {
    const out: Record<string, string> = {};
    for (const [name, ms] of this.spans) out[`${PROCESSING} > ${name}`] = formatDuration(ms);
    out[PROCESSING] = formatDuration(this.processed ?? performance.now() - this.started);
    out['writing tasks to disk'] = formatDuration(writeMs);
    return out;
  }

  private close(now: number): void {
    if (!this.current) return;
    this.spans.set(this.current.name, (this.spans.get(this.current.name) ?? 0) + now - this.current.since);
    this.current = null;
  }
}

/** `progress` of a batch being processed, in the reference's shape; null once it is finished. */
export function processingProgress(): { steps: Array<{ currentStep: string; finished: number; total: number }>; percentage: number } {
  return { steps: [{ currentStep: PROCESSING, finished: 0, total: 1 }], percentage: 0 };
}
