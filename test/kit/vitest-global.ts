// vitest's globalSetup (vitest.config.ts): marks the suite's processes before
// any worker starts, and after the last test fails the run on any process a
// test left behind (test/kit/leftovers.ts).

import { collectLeftovers, describeLeftovers, markSuite } from './leftovers';

export default function setup(): () => Promise<void> {
  const suite = markSuite();
  return async () => {
    const found = await collectLeftovers(suite);
    if (found.length === 0) return;
    console.error(describeLeftovers(found));
    // vitest only logs a teardown's throw: the exit status must say it too.
    process.exitCode = 1;
  };
}
