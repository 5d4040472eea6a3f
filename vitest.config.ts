import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts', 'src/**/*.test.ts'],
    pool: 'forks',
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // The CLI tests run the built binary; build once before any test file starts.
    globalSetup: ['test/global-setup.ts'],
  },
});
