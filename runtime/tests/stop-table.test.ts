// Runs the runtime's own Python tests (the stop table, a test per row) as part
// of `npm test`. They drive warden_runtime.py's functions with real signals.

import { execFileSync } from 'node:child_process';
import { resolve } from 'node:path';
import { expect, it } from 'vitest';

it('the runtime stop table holds, row by row (python3 -m unittest)', () => {
  let output = '';
  let status = 0;
  try {
    output = execFileSync('python3', ['-m', 'unittest', 'discover', '-s', resolve(__dirname), '-p', 'test_*.py', '-v'], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: 120_000,
    });
  } catch (error) {
    const failure = error as { status?: number; stdout?: string; stderr?: string };
    status = failure.status ?? 1;
    output = `${failure.stdout ?? ''}${failure.stderr ?? ''}`;
  }
  if (status !== 0) console.error(output);
  expect(status).toBe(0);
});
