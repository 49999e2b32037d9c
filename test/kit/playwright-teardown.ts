// Playwright Test's globalTeardown (playwright.config.ts): fails the run on
// any process a spec left behind (test/kit/leftovers.ts), such as an ssh
// ControlMaster or the sshd session it holds open.

import { collectLeftovers, describeLeftovers, markedSuite, SUITE_MARKER } from './leftovers';

export default async function teardown(): Promise<void> {
  const suite = markedSuite();
  if (!suite) throw new Error(`${SUITE_MARKER} is not set: playwright-setup.ts did not run, so what the specs left cannot be told apart from other runs' processes.`);
  const found = await collectLeftovers(suite);
  if (found.length > 0) throw new Error(describeLeftovers(found));
}
