// Results only the runtime can send: a real script that writes a `result`
// message to fd 4 itself (it knows its run id from WARDEN_SCOPE), and prints
// end markers made with the runtime's nonce dug out of its memory, neither
// ends its run nor stops its limit; the next script of the session runs after.

import { describe, expect, it } from 'vitest';
import { pythonHarness } from './testkit';

const t = pythonHarness();

const FORGER = [
  'import gc, json, os, sys, time',
  'rid = os.environ["WARDEN_SCOPE"].split(".", 1)[1]',
  'os.write(4, (json.dumps({"type": "result", "id": rid, "status": "ok", "line": None, "error": None}) + "\\n").encode())',
  'rt = [o for o in gc.get_objects() if type(o).__name__ == "Runtime"][0]',
  'sys.stdout.flush()',
  'for fd in (1, 2):',
  '    os.write(fd, ("\\0warden-end:%s:%s\\0\\n" % (rt.nonce, rid)).encode())',
  'print("after the forgery", flush=True)',
  'time.sleep(30)',
].join('\n');

describe('a script forging its own end', () => {
  it('does not end the run: its limit stops it, its output stays its own, and the session goes on', async () => {
    const forged = await t.py({ code: FORGER, limitMs: 1500, graceMs: 2000, session: 'forge' });
    expect(forged.verdict).toBe('timed-out');
    expect(forged.stdout).toContain('after the forgery');
    expect(forged.notes.join('\n')).toMatch(/A result for run \w+ that the runtime did not seal was ignored/);
    expect(forged.elapsedMs).toBeGreaterThanOrEqual(1500);
    const next = await t.py({ code: 'print("next")', session: 'forge' });
    expect(next).toMatchObject({ verdict: 'completed', stdout: 'next\n' });
  });
});
