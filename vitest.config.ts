import { defineConfig } from 'vitest/config';
import LongestFirst from './test/longest-first.js';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts', 'src/**/*.test.ts'],
    pool: 'forks',
    // Two files at once on two cores (vitest's default is one fewer than the cores): much of a file's
    // time is spent waiting on child processes, servers and disk, which the other file fills.
    maxWorkers: 2,
    sequence: { sequencer: LongestFirst },
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // The CLI tests run the built binary; build once before any test file starts.
    globalSetup: ['test/global-setup.ts'],
  },
});
