// Crash reports through real runs (src/shared/crash): a Python script that
// raises is told where to look; a shell whose child crashed, and which went on
// to exit 3, names that child (its pid and command) in its notes and in the
// result's culprit, so a page opened later shows it; a process that crashes
// itself is its own culprit. Real processes, real signals.

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { Harness } from './proc-testkit';

let h: Harness;
let dir: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'warden-crash-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));
beforeEach(() => {
  h = new Harness();
});
afterEach(async () => {
  await h.cleanup();
});

const SEGV = 'import os, signal; os.kill(os.getpid(), signal.SIGSEGV)';

describe('a crash report at the end of the output', () => {
  it("a script's KeyError: the advice names its file, line and function, not just stderr", async () => {
    writeFileSync(join(dir, 'crash_keyerror.py'), 'import json\n\n\ndef load(config):\n    return config["database_url"]\n\n\nsettings = load({"debug": True})\n');
    const r = await h.run({ argv: ['python3', 'crash_keyerror.py'], cwd: dir });
    expect(r.verdict).toBe('failed');
    expect(r.advice).toBe("Look at crash_keyerror.py:5 (in load) first: it raised KeyError: 'database_url' there. The traceback is at the end of stderr.");
    expect(r.culprit).toBeUndefined();
  });
});

describe('the culprit', () => {
  it('a shell whose child segfaulted and that exits 3: the child named in a note and in the result', async () => {
    const r = await h.run({ argv: ['bash', '-c', `python3 -c '${SEGV}'; echo after; exit 3`], cwd: dir });
    expect(r).toMatchObject({ verdict: 'failed', exitCode: 3 });
    expect(r.culprit).toMatchObject({ signal: 'SIGSEGV', source: 'shell', command: `python3 -c '${SEGV}'`, stderrLine: 1 });
    expect(r.culprit!.pid).toBeGreaterThan(1);
    expect(r.notes.join(' ')).toContain(`died of SIGSEGV (Segmentation fault`);
    expect(r.notes.join(' ')).toContain(`pid ${r.culprit!.pid}`);
    // Where its core went is looked for, as for a crash of the run's own process.
    expect(r.core).toBeDefined();
  });

  it('a process that crashes itself is the culprit, named as its last sample saw it', async () => {
    const r = await h.run({ argv: ['python3', '-c', `import time; time.sleep(1); ${SEGV}`], cwd: dir });
    expect(r.verdict).toBe('crashed');
    expect(r.culprit).toMatchObject({ signal: 'SIGSEGV', source: 'exit' });
    expect(r.culprit!.pid).toBeGreaterThan(1);
    expect(r.culprit!.command).toMatch(/python/);
  });

  it('a run that completes has none', async () => {
    const r = await h.run({ argv: ['bash', '-c', 'echo Killed'] });
    expect(r.verdict).toBe('completed');
    expect(r.culprit).toBeUndefined();
  });
});
