import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts', 'runtime/**/*.test.ts'],
    // e2e/ is Playwright Test's (playwright.config.ts, `npm run test:e2e`).
    // Real processes and real signals: give slow machines room, never assert speed here.
    testTimeout: 60_000,
    hookTimeout: 30_000,
    pool: 'forks',
    // A safety net: a background host a test's warden command started exits soon by itself
    // (tests stop theirs; see src/cli/testkit.ts).
    // KUBERNETES_SERVICE_HOST empty: the tests read the standard exit codes wherever they run (a CI
    // job in a pod would otherwise get --exit-codes k8s); the k8s contract's own tests set it.
    env: { WARDEN_HOST_IDLE: '30s', KUBERNETES_SERVICE_HOST: '' },
  },
});
