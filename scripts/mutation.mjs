// `npm run test:mutation [-- ARGS]`: StrykerJS (stryker.config.mjs) in a PID
// namespace of its own, Stryker its PID 1 (see stryker.config.mjs for why).
// ARGS go to `stryker run` as they are, but one of ours:
//
//   --since REF   mutate only the files of stryker.config.mjs's `mutate`
//                 this change touched since it left git REF (their merge
//                 base; committed or not), in Stryker's
//                 incremental mode (its own file, reports/stryker-since.json):
//                 a change is checked in minutes, and a run again after an
//                 edit reuses every result the edit did not touch. A change
//                 to a test the mutation config runs checks its namesake
//                 (x.test.ts: x.ts, or the file TESTED_FILE in
//                 scripts/mutation-tests.mjs names), or every file when it
//                 has none (the incremental file then keeps what that test
//                 did not change).
//
// StrykerJS has an incremental mode but no notion of a git ref: the ref's
// diff picks the files here, Stryker's own diff the mutants.

import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);

function fail(line) {
  process.stderr.write(`test:mutation: ${line}\n`);
  process.exit(2);
}

function git(...gitArgs) {
  const result = spawnSync('git', gitArgs, { cwd: root, encoding: 'utf8' });
  if (result.status !== 0) fail(`git ${gitArgs.join(' ')} failed: ${(result.stderr || result.error?.message || '').trim().split('\n')[0]}`);
  return result.stdout.split('\n').filter(Boolean);
}

/** The config's mutate entries (a file, or a file with a line range) whose file changed since `ref`, and why. */
async function changedSince(ref, config, tests, testedFile) {
  if (spawnSync('git', ['rev-parse', '--verify', '--quiet', `${ref}^{commit}`], { cwd: root }).status !== 0) fail(`--since ${ref}: not a commit this repository knows.`);
  // This change: since where it left the ref (what the ref gained meanwhile is not this change's),
  // committed or not, and files git does not track yet.
  const [base] = git('merge-base', ref, 'HEAD');
  const changed = new Set([...git('diff', '--name-only', base, '--'), ...git('ls-files', '--others', '--exclude-standard')]);
  const fileOf = (entry) => entry.replace(/:\d+(:\d+)?-\d+(:\d+)?$/, '');
  const mutated = new Set(config.mutate.map(fileOf));
  // A changed test checks its namesake (x.test.ts, x.ts); one with none (interleavings, teardown-scan) checks every file.
  const testChanged = tests.filter((test) => changed.has(test));
  const namesakes = testChanged.map((test) => testedFile[test] ?? test.replace(/\.test\.ts$/, '.ts'));
  const everything = namesakes.some((file) => !mutated.has(file));
  const entries = config.mutate.filter((entry) => everything || changed.has(fileOf(entry)) || namesakes.includes(fileOf(entry)));
  return { entries, files: [...new Set(entries.map(fileOf))], testChanged, everything };
}

let since;
const passed = [];
for (let i = 0; i < args.length; i++) {
  const arg = args[i];
  if (arg === '--since') {
    since = args[++i];
    if (since === undefined || since.startsWith('-')) fail('--since takes a git ref (a branch, a tag or a commit), e.g. --since main.');
  } else if (arg.startsWith('--since=')) {
    since = arg.slice('--since='.length);
    if (since === '') fail('--since takes a git ref (a branch, a tag or a commit), e.g. --since main.');
  } else {
    passed.push(arg);
  }
}

if (since !== undefined) {
  if (passed.some((arg) => arg === '--mutate' || arg === '-m' || arg.startsWith('--mutate='))) fail('give --since or --mutate, not both.');
  const { default: config } = await import(join(root, 'stryker.config.mjs'));
  const { DECISION_TESTS, TESTED_FILE } = await import(join(root, 'scripts', 'mutation-tests.mjs'));
  const { entries, files, testChanged, everything } = await changedSince(since, config, DECISION_TESTS, TESTED_FILE);
  if (entries.length === 0) {
    process.stdout.write(`test:mutation: none of the ${config.mutate.length} files or ranges stryker.config.mjs mutates, nor a test it runs, changed since ${since}: nothing to do.\n`);
    process.exit(0);
  }
  process.stdout.write(
    `test:mutation: ${everything ? `a test of more than one file changed since ${since} (${testChanged.join(', ')}): every file` : `changed since ${since}${testChanged.length > 0 ? ` (or tested by ${testChanged.join(', ')})` : ''}`}: ${files.join(', ')}\n`,
  );
  passed.push('--mutate', entries.join(','), '--incremental', '--incrementalFile', 'reports/stryker-since.json');
}

// Stryker as PID 1 of a PID namespace of its own (stryker.config.mjs says why); its status is ours.
const stryker = spawnSync('unshare', ['--pid', '--fork', '--mount-proc', process.execPath, join(root, 'node_modules', '@stryker-mutator', 'core', 'bin', 'stryker.js'), 'run', ...passed], {
  cwd: root,
  stdio: 'inherit',
});
if (stryker.error) fail(`unshare could not run (${stryker.error.message}); it needs root or CAP_SYS_ADMIN (see bench/README.md, "Mutation testing").`);
process.exit(stryker.status ?? 1);
