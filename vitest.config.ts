import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts', 'runtime/**/*.test.ts'],
    // e2e/ is Playwright Test's (playwright.config.ts, `npm run test:e2e`).
    // Real processes and real signals: give slow machines room, never assert speed here. A hang
    // guard only: a test waits on events or progress (test/kit/until.ts), and a loaded 2-core
    // machine can run one ten times slower than a quiet one.
    testTimeout: 120_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Marks the suite's processes, and fails the run on any a test left running (test/kit/leftovers.ts).
    globalSetup: ['test/kit/vitest-global.ts'],
    // A safety net: a background host a test's warden command started exits soon by itself
    // (tests stop theirs; see src/cli/testkit.ts).
    // KUBERNETES_SERVICE_HOST empty: the tests read the standard exit codes wherever they run (a CI
    // job in a pod would otherwise get --exit-codes k8s); the k8s contract's own tests set it.
    env: { WARDEN_HOST_IDLE: '30s', KUBERNETES_SERVICE_HOST: '' },
  },
});
