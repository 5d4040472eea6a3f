/**
 * Test files in the order that ends the run soonest on few cores: longest first, so that no long
 * file starts last and runs alone. Durations come from vitest's cache of the previous run when it
 * has one; a fresh clone (CI) has none, and then the files below, measured as the slowest, go first.
 */
import { relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/** The slowest files (wall seconds on 2 cores, Nov 2026), slowest first. */
const SLOWEST = [
  'test/cli/ops-safety.test.ts',
  'test/migrate/cli.test.ts',
  'test/keyword/movies.test.ts',
  'test/engine/engine.test.ts',
  'test/ops/cli.test.ts',
  'test/keyword/parallel-extract.test.ts',
  'test/cli/serve-allocator.test.ts',
  'test/engine/warm.test.ts',
  'test/cli/compaction-crash.test.ts',
  'test/typecheck.test.ts',
  'test/http/compaction-stats.test.ts',
  'test/vector/vector-mapped.test.ts',
  'test/http/task-queue-compaction.test.ts',
  'test/vector/vector-store.test.ts',
  'test/cli/task-queue-compaction-crash.test.ts',
  'test/cli/crash-in-commit.test.ts',
  'test/auth/serve-cli.test.ts',
  'test/cli/install.test.ts',
];

export default class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const root = this.ctx.config.root;
    const cached = sorted.some((f) => this.ctx.cache.getFileTestResults(`${f.project.name}:${relative(root, f.moduleId)}`));
    if (cached) return sorted;
    const rank = (f: TestSpecification) => {
      const at = SLOWEST.indexOf(relative(root, f.moduleId));
      return at === -1 ? SLOWEST.length : at;
    };
    // stable: the rest keep the base order (larger files first)
    return sorted.map((f, i) => ({ f, i })).sort((a, b) => rank(a.f) - rank(b.f) || a.i - b.i).map(({ f }) => f);
  }
}
