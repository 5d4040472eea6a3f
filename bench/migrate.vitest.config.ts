import { defineConfig } from 'vitest/config';

// `npx vitest run --config bench/migrate.vitest.config.ts` (after `npm run build`); MIGRATE_BENCH_POINTS sets the size.
export default defineConfig({
  test: {
    include: ['bench/migrate.bench.ts'],
    pool: 'forks',
    testTimeout: 3 * 60 * 60 * 1000,
    hookTimeout: 60_000,
  },
});
