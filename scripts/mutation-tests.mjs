// The tests StrykerJS runs against the mutants (vitest.mutation.config.ts),
// one list for the config and for `npm run test:mutation -- --since REF`
// (scripts/mutation.mjs: a change to one of them checks every mutated file).

export const DECISION_TESTS = [
  'src/main/supervisor/verdict.test.ts',
  'src/main/supervisor/deadline.test.ts',
  'src/main/supervisor/extend.test.ts',
  'src/main/supervisor/interleavings.test.ts',
  'src/main/supervisor/output.test.ts',
  'src/main/supervisor/python/stop.test.ts',
  'src/main/supervisor/teardown.test.ts',
  'src/main/supervisor/teardown-scan.test.ts',
  'src/main/store/recovery.test.ts',
  // The model's answer, owner pids, output pages and the error table (issue 31).
  'src/shared/model-answer.test.ts',
  // The services' parts of the model's answer (readiness, ports, a ready service's advice).
  'src/cli/service-answer.test.ts',
  'src/main/host/owner-pids.test.ts',
  'src/main/host/output-page.test.ts',
  'src/shared/errors.test.ts',
  // The hook's reading of a command line and of the harnesses' rules (issue 27).
  'src/cli/hook/walk.test.ts',
  'src/cli/hook/match.test.ts',
  'src/cli/hook/rules.test.ts',
  'src/cli/hook/codex-yield.test.ts',
  // Whose run cgroup a start-up sweep may end.
  'src/main/supervisor/cgroup-owner.test.ts',
  // The renderer's merge of a run's snapshot and live chunks.
  'src/renderer/src/store/live-output.test.ts',
  'src/shared/sorted.test.ts',
  // warden setup's edits and removals (issue 31).
  'src/cli/setup/index.test.ts',
  'src/cli/setup/jsonc.test.ts',
  'src/cli/setup/toml.test.ts',
  // The termination message's cut (issue 31).
  'src/cli/termination-log-cut.test.ts',
  // What `warden remote add` takes (issue 31).
  'src/client/remotes.test.ts',
];

// A test named for what it tests rather than for its file: the file it checks
// (`--since`: a change to it checks that file alone). Any other test checks
// its namesake (x.test.ts: x.ts), or every file when it has none.
export const TESTED_FILE = {
  // The cut alone, in this process; termination-log.test.ts runs warden itself, which the sandbox cannot.
  'src/cli/termination-log-cut.test.ts': 'src/cli/termination-log.ts',
  // The services' lines of the model's answer, through the CLI's run.
  'src/cli/service-answer.test.ts': 'src/shared/model-answer.ts',
};
