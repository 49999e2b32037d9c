// What the hook's rewrite does when the harness runs it: the answer of
// `warden hook` is executed with bash, as Claude Code's Bash tool, Codex and
// Gemini CLI run a command, against a real background host. A failing
// command's exit status and stderr reach the output block; the harness's 2 s
// timeout is Warden's limit (the output kept, the verdict timed-out); a yield
// comes back with exit 0 and a <next> line that, run as it is, continues the
// run; and that <next> command goes through the hook untouched.

import { execa } from 'execa';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawn } from 'node:child_process';
import { afterAll, describe, expect, it } from 'vitest';
import { until } from '../../../test/kit/until';
import { accepts, fixture, freePort } from '../../main/supervisor/services-testkit';
import { stopBackgroundHosts, WARDEN_BIN } from '../testkit';

const dirs: string[] = [];
afterAll(async () => {
  await stopBackgroundHosts(dirs.map((dir) => join(dir, 'state')));
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function home(): string {
  const dir = mkdtempSync(join(tmpdir(), 'whookrun-'));
  dirs.push(dir);
  mkdirSync(join(dir, '.claude'));
  writeFileSync(join(dir, '.claude', 'settings.json'), JSON.stringify({ permissions: { allow: ['Bash'] } }));
  return dir;
}

function env(dir: string): Record<string, string> {
  return { HOME: dir, WARDEN_STATE_DIR: join(dir, 'state'), CLAUDE_CONFIG_DIR: '', CLAUDE_PROJECT_DIR: dir, WARDEN_CLAUDE_MANAGED_DIR: join(dir, 'managed') };
}

/** The hook's rewritten command for a Claude Code Bash call. */
async function rewrite(dir: string, toolInput: Record<string, unknown>, hookArgs: string[] = []): Promise<{ command: string; raw: string }> {
  const input = { session_id: 's', cwd: dir, permission_mode: 'default', hook_event_name: 'PreToolUse', tool_name: 'Bash', tool_input: toolInput, tool_use_id: 't' };
  const result = await execa(process.execPath, [WARDEN_BIN, 'hook', 'claude-code', ...hookArgs], { input: JSON.stringify(input), env: env(dir) });
  if (result.stdout === '') return { command: '', raw: '' };
  const out = JSON.parse(result.stdout) as { hookSpecificOutput: { updatedInput: { command: string } } };
  return { command: out.hookSpecificOutput.updatedInput.command, raw: result.stdout };
}

/** Runs a command line as the harness's shell tool does. */
function shell(dir: string, command: string) {
  return execa('bash', ['-c', command], { reject: false, cwd: dir, env: env(dir), stdin: 'ignore' });
}

describe('the hook\'s rewrite, run as the harness runs it', () => {
  it('a failing command\'s exit status and stderr reach the output block', async () => {
    const dir = home();
    const { command } = await rewrite(dir, { command: 'echo out; echo "it broke" >&2; exit 3', timeout: 30000 });
    const result = await shell(dir, command);
    expect(result.exitCode).toBe(3);
    expect(result.stdout).toMatch(/^<shell_results>\n/);
    expect(result.stdout).toContain('<exit_code>3</exit_code>');
    expect(result.stdout).toContain('<stdout>out\n</stdout>');
    expect(result.stdout).toContain('<stderr>it broke\n</stderr>');
  });

  it('the harness\'s 2 s timeout becomes the limit, and the output so far is kept', async () => {
    const dir = home();
    const { command } = await rewrite(dir, { command: 'echo before; sleep 30; echo never', timeout: 2000 });
    expect(command).toContain('--limit 2000ms');
    const result = await shell(dir, command);
    expect(result.exitCode).toBe(124);
    expect(result.stdout).toContain('<verdict>timed-out</verdict>');
    expect(result.stdout).toMatch(/<elapsed>[\d.]+ s of a 2 s limit<\/elapsed>/);
    expect(result.stdout).toContain('<stdout>before\n</stdout>');
    expect(result.stdout).not.toContain('never');
  });

  it('a yield returns exit 0 with the exact next command, which continues the run and passes through the hook untouched', async () => {
    const dir = home();
    const { command } = await rewrite(dir, { command: 'echo start; sleep 2; echo done' }, ['--yield', '500ms']);
    const first = await shell(dir, command);
    expect(first.exitCode).toBe(0);
    expect(first.stdout).toContain('<verdict>running</verdict>');
    const next = /<next>(.*)<\/next>/.exec(first.stdout)?.[1];
    expect(next).toBeDefined();
    const unescaped = next!.replace(/&lt;/g, '<').replace(/&amp;/g, '&');
    expect(unescaped).toContain(WARDEN_BIN);
    expect((await rewrite(dir, { command: unescaped })).raw).toBe('');
    let last = await shell(dir, unescaped);
    for (let i = 0; i < 20 && last.stdout.includes('<verdict>running</verdict>'); i++) {
      last = await shell(dir, /<next>(.*)<\/next>/.exec(last.stdout)![1]!.replace(/&lt;/g, '<').replace(/&amp;/g, '&'));
    }
    expect(last.exitCode).toBe(0);
    expect(last.stdout).toContain('<verdict>completed</verdict>');
    expect(last.stdout).toContain('done');
  });

  it('a dev server sent to the background with & answers ready with its port, runs on after the call, and ends with its agent', async () => {
    // Before, `npm run dev &` under the hook ended with the call (its background job torn down with the run).
    const dir = home();
    const port = await freePort();
    const { command } = await rewrite(dir, { command: `"${process.execPath}" "${fixture('dev-server.mjs')}" --port ${port} --delay 300 > dev.log 2>&1 &` });
    expect(command).toContain(' --ready port ');
    // The agent the line names: a process of this test's, so its going away can be seen.
    const agent = spawn('sleep', ['600'], { stdio: 'ignore' });
    try {
      const line = command.replace(/--owner-pid \d+/, `--owner-pid ${agent.pid}`);
      const result = await shell(dir, line);
      expect(result.exitCode, result.stdout + result.stderr).toBe(0);
      expect(result.stdout).toMatch(new RegExp(`<ready>ready after [\\d.]+ (ms|s), listening on ${port}`));
      expect(result.stdout).toContain(`<ports>`);
      // The call has returned; the server goes on.
      expect(await accepts(port)).toBe(true);
      agent.kill('SIGKILL');
      const gone = Date.now();
      await until('the port to be free once the agent is gone', async () => !(await accepts(port)));
      console.log(`hook-run: the background dev server's port was free ${Date.now() - gone} ms after its agent was killed`);
    } finally {
      agent.kill('SIGKILL');
    }
  });
});
