// The tests StrykerJS runs against each mutant of the decision code
// (stryker.config.mjs, `npm run test:mutation`): the ones that cover verdict,
// advice, the deadline and stop tables, the output cap, teardown's selection
// and recovery's claim. MUTATION_TESTS (comma-separated paths) narrows them
// for a quick run on a shared machine.
import { readFileSync } from 'node:fs';
import { defineConfig } from 'vitest/config';
import base from './vitest.config';

// A mutant of teardown's choice of processes can SIGKILL every process this
// user can see (on a shared machine: everyone's). Only in a PID namespace whose
// PID 1 is Stryker (npm run test:mutation) is what it sees Stryker's own tree.
function strykerIsPid1(): boolean {
  try {
    return readFileSync('/proc/1/cmdline', 'utf8').includes('stryker');
  } catch {
    return false;
  }
}
if (!strykerIsPid1()) {
  throw new Error('Mutation tests run only in a PID namespace of their own: use npm run test:mutation (unshare --pid --fork --mount-proc).');
}

const DECISION_TESTS = [
  'src/main/supervisor/verdict.test.ts',
  'src/main/supervisor/deadline.test.ts',
  'src/main/supervisor/extend.test.ts',
  'src/main/supervisor/interleavings.test.ts',
  'src/main/supervisor/output.test.ts',
  'src/main/supervisor/python/stop.test.ts',
  'src/main/supervisor/teardown.test.ts',
  'src/main/supervisor/teardown-scan.test.ts',
  'src/main/store/recovery.test.ts',
  'src/main/supervisor/cgroup-owner.test.ts',
];

// Not mergeConfig: it would append this include to the base's (every test).
// No leftover check (test/kit/vitest-global.ts): a mutant may leave processes, and the namespace ends them all with Stryker.
export default defineConfig({ ...base, test: { ...base.test, globalSetup: [], include: process.env.MUTATION_TESTS ? process.env.MUTATION_TESTS.split(',') : DECISION_TESTS } });
