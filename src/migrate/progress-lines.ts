/**
 * Migration progress for a log rather than a terminal (cron, systemd, CI): plain lines on
 * stderr, one per collection and phase, and a line of copied points at most every 10 s (and at
 * the end of the copy), so that a long run shows it is alive. `ProgressView` draws the terminal
 * version of the same events.
 */
import type { MigrationEvent } from './pipeline.js';

const EVERY_MS = 10_000;

export class ProgressLines {
  private lastAt = 0;
  private readonly started = Date.now();

  constructor(private readonly stream: NodeJS.WritableStream = process.stderr) {}

  onEvent = (e: MigrationEvent): void => {
    switch (e.type) {
      case 'collection':
        this.line(`${e.collection} -> index ${e.index}: ${e.total} points${e.resumedAt > 0 ? `, resuming after ${e.resumedAt}` : ''}`);
        break;
      case 'phase':
        this.line(`${e.collection}: ${e.phase}`);
        break;
      case 'progress': {
        const now = Date.now();
        if (now - this.lastAt < EVERY_MS && e.points < e.total) return;
        this.lastAt = now;
        const percent = e.total > 0 ? ` (${Math.floor((e.points / e.total) * 100)}%)` : '';
        this.line(`${e.collection}: ${e.points}/${e.total} points copied${percent}`);
        break;
      }
      case 'retry':
        this.line(`retry ${e.attempt} in ${(e.delayMs / 1000).toFixed(1)} s: ${e.reason}`);
        break;
    }
  };

  private line(text: string): void {
    this.stream.write(`[${((Date.now() - this.started) / 1000).toFixed(1)} s] ${text}\n`);
  }
}
