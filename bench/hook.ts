// (r) What `warden hook` costs per shell command an agent runs: the hook as
// the harness calls it (a process reading Claude Code's PreToolUse JSON on
// stdin, with the user's settings holding permission rules), against
// `node -e 0` with the same stdin, interleaved call by call (which side goes
// first turns). bin/warden.mjs of this checkout, which also checks that the
// bundle is fresh (an installed package skips that check).

import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { check, median, ms, quantile, ratio, type Figure } from './lib';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const BIN = join(ROOT, 'bin', 'warden.mjs');

function timeCall(argv: string[], input: string, env: NodeJS.ProcessEnv): { ms: number; stdout: string } {
  const started = performance.now();
  const result = spawnSync(argv[0]!, argv.slice(1), { env, input, stdio: ['pipe', 'pipe', 'pipe'] });
  const elapsed = performance.now() - started;
  if (result.status !== 0) throw new Error(`${argv.join(' ')} exited ${result.status}: ${String(result.stderr).trim().split('\n')[0]}`);
  return { ms: elapsed, stdout: String(result.stdout) };
}

export async function benchHook(options: { calls: number }): Promise<Figure> {
  const home = mkdtempSync(join(tmpdir(), 'wbench-hook-'));
  try {
    mkdirSync(join(home, '.claude'));
    writeFileSync(join(home, '.claude', 'settings.json'), JSON.stringify({ permissions: { allow: ['Bash(npm test:*)', 'Bash(git status)'], deny: ['Bash(rm -rf:*)'], ask: ['Bash(git push:*)'] } }));
    const env: NodeJS.ProcessEnv = { ...process.env, HOME: home, WARDEN_STATE_DIR: join(home, 'state'), CLAUDE_PROJECT_DIR: home };
    const input = JSON.stringify({ session_id: 's', transcript_path: '/tmp/t', cwd: home, permission_mode: 'default', hook_event_name: 'PreToolUse', tool_name: 'Bash', tool_input: { command: 'npm test -- --grep parser', timeout: 120000, description: 'Run the tests' }, tool_use_id: 't1' });
    const hook = [process.execPath, BIN, 'hook', 'claude-code'];
    const node = [process.execPath, '-e', '0'];
    // Build the bundle if needed, and check the answer is a rewrite, outside the timed calls.
    const first = timeCall(hook, input, env);
    if (!first.stdout.includes('"updatedInput"')) throw new Error(`the hook did not rewrite the command: ${first.stdout.slice(0, 200)}`);
    for (let i = 0; i < 5; i++) {
      timeCall(node, input, env);
      timeCall(hook, input, env);
    }
    const times = { node: [] as number[], hook: [] as number[] };
    for (let i = 0; i < options.calls; i++) {
      const pair: ['node' | 'hook', string[]][] = i % 2 === 0 ? [['node', node], ['hook', hook]] : [['hook', hook], ['node', node]];
      for (const [side, argv] of pair) times[side].push(timeCall(argv, input, env).ms);
    }
    const n = median(times.node);
    const h = median(times.hook);
    return {
      title: `(r) warden hook per call (${options.calls} calls per side, interleaved)`,
      lines: [
        `median node -e 0 ${ms(n)} (p90 ${ms(quantile(times.node, 0.9))}), warden hook claude-code ${ms(h)} (p90 ${ms(quantile(times.hook, 0.9))}): ${ratio(h, n)}`,
        `answer: ${first.stdout.length} bytes of JSON (permissionDecision allow, the command rewritten into warden run)`,
      ],
      checks: [check(`hook <= 1.5x node -e 0 (${ratio(h, n)})`, h <= 1.5 * n)],
    };
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
}
