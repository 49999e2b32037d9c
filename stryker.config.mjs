// Mutation testing of the decision code (`npm run test:mutation`; score and
// survivors in bench/README.md). Line ranges pick the deciding part of files
// that also do I/O: teardown's choice of processes, recovery's claim.
// A mutant of teardown's choice can SIGKILL every process it can see, so every
// run goes in a PID namespace of its own with Stryker as its PID 1 (the
// npm script; vitest.mutation.config.ts refuses to run otherwise).
// A quick run of one file: npm run test:mutation -- --mutate src/main/supervisor/verdict.ts
// What changed since a git ref, incrementally: npm run test:mutation -- --since main (scripts/mutation.mjs)
// As its namespace's init, Stryker gets only the signals it handles: without
// its SIGTERM handler (which exits), a mutant that SIGTERMs and SIGKILLs every
// process ends test runners, never the run. To stop a run, SIGKILL Stryker's
// pid (as seen outside): the namespace's processes end with it.
if (process.pid === 1) {
  const on = process.on.bind(process);
  process.on = (event, listener) => (event === 'SIGTERM' ? process : on(event, listener));
}

/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  testRunner: 'vitest',
  vitest: { configFile: 'vitest.mutation.config.ts' },
  coverageAnalysis: 'perTest',
  mutate: [
    'src/main/supervisor/verdict.ts',
    'src/main/supervisor/advice.ts',
    'src/main/supervisor/deadline.ts',
    'src/main/supervisor/python/stop.ts',
    'src/main/supervisor/output.ts',
    // scanScope and candidatePids: which processes a teardown ends. Lines 209
    // (the marker), 221 (the group test), 228-233 and 240 (the adopter walk),
    // 250 and 253 (the marker tests) are left out: their mutants choose every
    // process, Stryker's test runners included, which aborts the run
    // (bench/README.md).
    'src/main/supervisor/teardown.ts:208-208',
    'src/main/supervisor/teardown.ts:210-220',
    'src/main/supervisor/teardown.ts:222-227',
    'src/main/supervisor/teardown.ts:234-239',
    'src/main/supervisor/teardown.ts:241-249',
    'src/main/supervisor/teardown.ts:251-252',
    'src/main/supervisor/teardown.ts:254-260',
    'src/main/supervisor/teardown.ts:277-288',
    'src/main/store/recovery.ts:92-127',
    // The model's answer, owner pids, output pages and the error table (issue 31).
    'src/shared/model-answer.ts',
    'src/main/host/owner-pids.ts',
    'src/main/host/output-page.ts',
    'src/shared/errors.ts',
    // The hook: what bash would run, how a rule meets it, each harness's rules, Codex's yield (issue 27).
    'src/cli/hook/walk.ts',
    'src/cli/hook/match.ts',
    'src/cli/hook/rules.ts',
    'src/cli/hook/codex-yield.ts',
    // Whose run cgroup a start-up sweep may end: judgeOwner and what it reads.
    'src/main/supervisor/cgroup-owner.ts',
    // How the renderer merges a run's snapshot with its live chunks (issue 31).
    'src/renderer/src/store/live-output.ts',
    // The binary search output pages, output times and the log's rows share.
    'src/shared/sorted.ts',
    // warden setup's edits and removals (issue 31): the JSONC and TOML text edits, and what each harness gets.
    'src/cli/setup/jsonc.ts',
    'src/cli/setup/toml.ts',
    'src/cli/setup/index.ts',
    // The termination message's cut (issue 31): whole lines, whole characters, the file rules.
    'src/cli/termination-log.ts',
    // What `warden remote add` takes (issue 31): a remote's name, the ssh URL, a --command's words, the ssh argv.
    'src/client/remotes.ts:55-161',
    'src/client/remotes.ts:350-392',
  ],
  // Real processes: one mutant at a time per core at most, and room for slow machines.
  concurrency: 2,
  timeoutMS: 30_000,
  reporters: ['clear-text', 'progress', 'html', 'json'],
  htmlReporter: { fileName: 'reports/mutation/index.html' },
  jsonReporter: { fileName: 'reports/mutation/mutation.json' },
  // Build output (out/cli/current is a symlink the sandbox copy cannot take) and reports stay out of the sandbox.
  ignorePatterns: ['/out', '/reports', '/coverage', '/dist', '/test-results', '/playwright-report'],
  tempDirName: '.stryker-tmp',
  cleanTempDir: 'always',
};
