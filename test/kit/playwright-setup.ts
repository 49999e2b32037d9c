// Playwright Test's globalSetup (playwright.config.ts): marks the suite's
// processes before any worker starts, for playwright-teardown.ts to find
// what the specs left behind (test/kit/leftovers.ts).

import { markSuite } from './leftovers';

export default function setup(): void {
  markSuite();
}
