import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts', 'runtime/**/*.test.ts'],
    // e2e/ is Playwright Test's (playwright.config.ts, `npm run test:e2e`).
    // Real processes and real signals: give slow machines room, never assert speed here.
    testTimeout: 60_000,
    hookTimeout: 30_000,
    pool: 'forks',
  },
});
