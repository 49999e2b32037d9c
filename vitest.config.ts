import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts', 'runtime/**/*.test.ts'],
    // e2e/ is Playwright Test's (playwright.config.ts, `npm run test:e2e`).
    // Real processes and real signals: give slow machines room, never assert speed here.
    testTimeout: 60_000,
    hookTimeout: 30_000,
    pool: 'forks',
    // Marks the suite's processes, and fails the run on any a test left running (test/kit/leftovers.ts).
    globalSetup: ['test/kit/vitest-global.ts'],
    // A safety net: a background host a test's warden command started exits soon by itself
    // (tests stop theirs; see src/cli/testkit.ts).
    env: { WARDEN_HOST_IDLE: '30s' },
  },
});
