// The end-to-end specs (e2e/*.spec.ts) under Playwright Test, in Debian's
// Chromium (Playwright cannot download its browsers here): the web UI against
// `warden serve`, one host and one page per file, files one after another
// (each starts a host; a 2-core machine runs them best in turn). A failed
// test keeps its trace and a screenshot (the harness attaches them); the HTML
// report goes to playwright-report/. `npm test` runs them after the unit tests.

import { defineConfig } from '@playwright/test';
import { CHROMIUM, CHROMIUM_ARGS } from './e2e/harness';

export default defineConfig({
  testDir: 'e2e',
  testMatch: '*.spec.ts',
  workers: 1,
  fullyParallel: false,
  forbidOnly: !!process.env.CI,
  retries: 0,
  timeout: 120_000,
  outputDir: 'test-results/playwright',
  // Marks the suite's processes, and fails the run on any a spec left running (test/kit/leftovers.ts).
  globalSetup: './test/kit/playwright-setup.ts',
  globalTeardown: './test/kit/playwright-teardown.ts',
  reporter: [['list'], ['html', { open: 'never', outputFolder: 'playwright-report' }]],
  use: {
    browserName: 'chromium',
    launchOptions: { executablePath: CHROMIUM, args: CHROMIUM_ARGS },
    viewport: { width: 1280, height: 860 },
    screenshot: 'only-on-failure',
    trace: 'retain-on-failure',
  },
});
