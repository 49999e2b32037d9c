// okExitCodes: exit codes besides 0 that a run is told mean success (grep's 1,
// diff's 1). The check at the boundary as a table, and real commands through
// the engine: the verdict is completed with a note, the exit code stays the
// command's own.

import { afterEach, describe, expect, it } from 'vitest';
import { Harness } from './proc-testkit';
import { checkOkExitCodes, WardenInputError } from './options';

let harness: Harness;
afterEach(async () => {
  await harness?.cleanup();
});

describe('checkOkExitCodes', () => {
  it.each([
    [undefined, []],
    [null, []],
    [[], []],
    [[1], [1]],
    [[255, 1, 2, 1], [1, 2, 255]],
  ])('%j is %j', (given, codes) => expect(checkOkExitCodes(given)).toEqual(codes));

  it.each([
    [[0], 'okExitCodes lists exit codes besides 0, which always means success.'],
    [[256], 'okExitCodes takes exit codes from 1 to 255, not 256.'],
    [[-1], 'okExitCodes takes exit codes from 1 to 255, not -1.'],
    [[1.5], 'okExitCodes takes exit codes from 1 to 255, not 1.5.'],
    [['1'], 'okExitCodes takes exit codes from 1 to 255, not "1".'],
    [1, 'okExitCodes must be an array of exit codes (1 to 255), not 1.'],
  ])('%j is refused: %s', (given, message) => {
    expect(() => checkOkExitCodes(given)).toThrow(WardenInputError);
    expect(() => checkOkExitCodes(given)).toThrow(message);
  });
});

describe('a run with okExitCodes', () => {
  it('grep with no match (exit 1) is completed, its exit code kept, with a note', async () => {
    harness = new Harness();
    const r = await harness.run({ argv: ['grep', '-q', 'no-such-text', '/dev/null'], okExitCodes: [1] });
    expect(r.verdict).toBe('completed');
    expect(r.exitCode).toBe(1);
    expect(r.advice).toBeNull();
    expect(r.notes.join('\n')).toMatch(/^Exit code 1 after .*which this run was told means success \(ok-exit 1\)\.$/m);
  });

  it('an exit code it does not name still fails; a signal still ends it as a signal', async () => {
    harness = new Harness();
    const failed = await harness.run({ argv: ['grep', '-q', 'x', '/no/such/file'], okExitCodes: [1] });
    expect(failed).toMatchObject({ verdict: 'failed', exitCode: 2 });
    const signaled = await harness.run({ argv: ['bash', '-c', 'kill -TERM $$'], okExitCodes: [1, 143] });
    expect(signaled.verdict).toBe('signaled');
  });

  it('a bad okExitCodes is refused before anything starts', () => {
    harness = new Harness();
    expect(() => harness.supervisor.start({ argv: ['true'], okExitCodes: [0] })).toThrow('okExitCodes lists exit codes besides 0');
    expect(harness.supervisor.list()).toEqual([]);
  });
});
