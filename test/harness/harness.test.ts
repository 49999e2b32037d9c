// Warden in the real agent CLIs: Claude Code, Codex and Gemini CLI from npm
// (pinned, cached outside node_modules), each driven non-interactively by a
// scripted model on 127.0.0.1 (model-server.ts) in a temporary HOME with its
// own WARDEN_STATE_DIR. Each case checks what the model received (the tool
// result as the harness sent it back) and what Warden's history holds.
//
// Claude Code is driven at two versions: 2.1.197 (the last whose package
// allows Node 20) through every case, and 2.1.332 (a later release; its
// package asks for Node 22, its native binary runs anyway) through the cases
// that differ there (its `cases` in TARGETS): its first request must already
// offer Warden's tools (not deferred behind ToolSearch), 300,000 lines must
// reach the model sized (not refused as too many tokens), and a run left live
// must be stopped when it exits.
//
// Skips, with the reason printed, when the registry cannot be reached or a
// CLI will not start. WARDEN_HARNESS_TESTS=0 skips them all; =claude-code,gemini
// picks some (claude-code is both versions, claude-code@2.1.332 the later
// alone). WARDEN_HARNESS_RECORD=DIR saves each case's calls and what the model
// got back; WARDEN_HARNESS_KEEP=1 keeps each case's temporary HOME and state
// dir.

import { execa } from 'execa';
import { appendFileSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, type TestContext } from 'vitest';
import { stopBackgroundHosts, WARDEN_BIN } from '../../src/cli/testkit';
import { configureHarness, driveHarness, driveInteractive, installPlugin, makeSandbox, registerWarden, type HarnessName, type Sandbox } from './harnesses';
import { CLAUDE_CODE_LATER, CODEX_LATER, ensureHarness, PINNED, type Pinned } from './install';
import { startModelServer, type ModelServer, type ScriptStep, type ToolResult } from './model-server';
import { until } from '../kit/until';
import { accepts, fixture, freePort } from '../../src/main/supervisor/services-testkit';

const CASE_MS = 180_000;
/** What a model may receive for one call: Gemini CLI's own cut is 40,000 characters. */
const MODEL_BUDGET = 40_000;

const chosen = (process.env.WARDEN_HARNESS_TESTS ?? '').trim();
const enabled = (name: HarnessName, version: string): boolean =>
  chosen !== '0' && (chosen === '' || chosen === '1' || chosen.split(',').some((pick) => pick === name || pick === `${name}@${version}`));

/** Each harness at each version the tests drive; `cases` limits a version to some cases (by their keys below). */
const PLUGIN_CASES = ['plugin-validate', 'plugin', 'plugin-session-end', 'plugin-remove', 'plugin-monitor'];
const TARGETS: { name: HarnessName; pinned: Pinned; cases?: ReadonlySet<string> }[] = [
  { name: 'claude-code', pinned: PINNED['claude-code'] },
  { name: 'claude-code', pinned: CLAUDE_CODE_LATER, cases: new Set(['first-request', 'big', 'left-live', ...PLUGIN_CASES]) },
  { name: 'codex', pinned: PINNED.codex },
  // The newest Codex (0.171.0): its plugin system moved fast between releases, so the plugin's cases run on it too.
  { name: 'codex', pinned: CODEX_LATER, cases: new Set(PLUGIN_CASES) },
  { name: 'gemini', pinned: PINNED.gemini },
];

interface RunJson {
  id: string;
  state: string;
  verdict?: string;
  exitCode: number | null;
  limitMs: number | null;
  advice: string | null;
  notes: string[];
  stdout: string;
  stderr: string;
  stdoutTruncated: number;
  endedAt?: string;
  argv?: string[];
  ready?: { ports: { port: number }[] } | false;
}

async function warden(box: Sandbox, args: string[]): Promise<string> {
  const result = await execa(process.execPath, [WARDEN_BIN, ...args], { env: box.env, extendEnv: false, reject: false, timeout: 60_000 });
  if (result.exitCode !== 0) throw new Error(`warden ${args.join(' ')} exited ${result.exitCode}: ${result.stderr}`);
  return result.stdout;
}

async function history(box: Sandbox): Promise<{ id: string; state: string; verdict?: string }[]> {
  return JSON.parse(await warden(box, ['list', '--json'])) as { id: string; state: string; verdict?: string }[];
}

/** The run a case started: the id the model was given, or else the newest in this sandbox's history (each case has its own). */
async function runOf(box: Sandbox, text: string): Promise<string> {
  const id = runIdIn(text) ?? (await history(box))[0]?.id;
  if (id === undefined) throw new Error('no run in the history');
  return id;
}

async function showRun(box: Sandbox, id: string): Promise<RunJson> {
  return JSON.parse(await warden(box, ['show', id, '--json'])) as RunJson;
}

/** The run id a model was given: in the result JSON, or a 12-hex id in the text. */
function runIdIn(text: string): string | undefined {
  return /"id"\s*:\s*"([0-9a-f]{12})"/.exec(text)?.[1] ?? /\b([0-9a-f]{12})\b/.exec(text)?.[1];
}

/** The exit code as the model reads it: `"exitCode":N` (JSON), `<exit_code>N</exit_code>` (text) or a harness's `Exit code N`. */
function exitCodeIn(text: string): number | undefined {
  const m = /exit[_ ]?code\W{1,4}(\d+)/i.exec(text);
  return m ? Number(m[1]) : undefined;
}

/** A short view of what the model saw, for a failure message: the head and tail. */
function excerpt(text: string): string {
  return text.length <= 1200 ? text : `${text.slice(0, 600)}\n[... ${text.length - 1200} characters ...]\n${text.slice(-600)}`;
}

/** Asserts something of what the model saw, with a short failure message. */
function sees(text: string, what: string | RegExp, info: string, present = true): void {
  const found = typeof what === 'string' ? text.includes(what) : what.test(text);
  expect(found, `${present ? 'expected' : 'did not expect'} ${String(what)} in what the model saw:\n${excerpt(text)}\n---\n${info}`).toBe(present);
}

/** The user's config files setup may change, relative to HOME. */
function userFiles(name: HarnessName): string[] {
  if (name === 'claude-code') return ['.claude.json', '.claude/settings.json'];
  if (name === 'codex') return ['.codex/config.toml', '.codex/hooks.json'];
  return ['.gemini/settings.json'];
}

function readIfAny(file: string): string | null {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return null;
  }
}

/** Settings of the user's own beside the harness's: another hook, a permission rule, comments. */
function addUserSettings(name: HarnessName, box: Sandbox): void {
  if (name === 'claude-code') {
    const settings = { permissions: { allow: ['Bash(ls:*)'], deny: ['Bash(rm -rf /:*)'] }, hooks: { PostToolUse: [{ matcher: 'Write', hooks: [{ type: 'command', command: 'true' }] }] }, env: { MY_SETTING: '1' } };
    writeFileSync(join(box.home, '.claude', 'settings.json'), `${JSON.stringify(settings, null, 2)}\n`);
  } else if (name === 'codex') {
    appendFileSync(join(box.home, '.codex', 'config.toml'), '# my own notes stay\n[tui]\nnotifications = false\n');
  } else {
    const file = join(box.home, '.gemini', 'settings.json');
    const text = readFileSync(file, 'utf8').replace(/\n}\s*$/, ',\n  // my own comment\n  "context": { "fileName": "NOTES.md" }\n}\n');
    writeFileSync(file, text);
  }
}

/** The user's own settings (addUserSettings), by file: what setup --remove must leave as they were. */
function userSettingKeys(name: HarnessName): [string, string[]][] {
  // (Not env: Claude Code adds DISABLE_AUTOUPDATER to it itself.)
  if (name === 'claude-code') return [['.claude/settings.json', ['permissions', 'hooks']], ['.claude.json', ['hasCompletedOnboarding']]];
  if (name === 'codex') return [];
  return [['.gemini/settings.json', ['context', 'security', 'telemetry', 'ui', 'privacy']]];
}

/** JSON with // comments and trailing commas (Gemini CLI's settings). */
function parseJsonc(text: string): Record<string, unknown> {
  return JSON.parse(text.replace(/^\s*\/\/.*$/gm, '').replace(/,(\s*[}\]])/g, '$1')) as Record<string, unknown>;
}

/**
 * The tools Claude Code offered in its first main-conversation request (one
 * carrying its own Bash tool; not a title or quota side request), and which of
 * them it marked for loading only through ToolSearch (`defer_loading`).
 */
function firstTurnTools(requests: ModelServer['requests']): { names: string[]; deferred: string[] } | undefined {
  for (const { path, body } of requests) {
    if (!path.includes('/messages') || path.includes('count_tokens')) continue;
    const tools = typeof body === 'object' && body !== null && Array.isArray((body as { tools?: unknown }).tools) ? ((body as { tools: { name?: unknown; defer_loading?: unknown }[] }).tools) : [];
    const names = tools.map((t) => String(t.name));
    if (!names.includes('Bash')) continue;
    return { names, deferred: tools.filter((t) => t.defer_loading === true).map((t) => String(t.name)) };
  }
  return undefined;
}

/** Each harness's own marks of a result it cut or moved to a file. */
const HARNESS_CUTS = [/<persisted-output>/, /tokens truncated/, /Output too large/, /exceeds maximum allowed tokens/];

for (const { name, pinned, cases } of TARGETS) {
  /** Whether this version runs the case `key` (a version with `cases` runs only those). */
  const has = (key: string): boolean => cases === undefined || cases.has(key);
  describe.skipIf(!enabled(name, pinned.version))(`${name} ${pinned.version} with warden mcp`, () => {
    let script: string | null = null;
    let skipReason = '';
    let server: ModelServer;
    const boxes: Sandbox[] = [];

    beforeAll(async () => {
      const got = await ensureHarness(pinned);
      if ('skip' in got) {
        skipReason = got.skip;
      } else {
        const native = !got.script.endsWith('js');
        const version = await execa(native ? got.script : process.execPath, native ? ['--version'] : [got.script, '--version'], { reject: false, timeout: 60_000, env: { ...process.env, NO_COLOR: '1' } });
        if (version.exitCode !== 0) skipReason = `${name} does not start here (${version.stderr.split('\n').slice(-2).join(' ') || `exit ${version.exitCode}`})`;
        else script = got.script;
      }
      if (skipReason) console.log(`skipping the ${name} ${pinned.version} tests: ${skipReason}`);
      server = await startModelServer();
    }, 900_000);

    afterEach(async () => {
      await stopBackgroundHosts(boxes.map((b) => b.stateDir));
      // The sandboxes (HOME, state dir, project) go; WARDEN_HARNESS_KEEP=1 keeps them to look into.
      if (process.env.WARDEN_HARNESS_KEEP !== '1') for (const box of boxes) rmSync(dirname(box.home), { recursive: true, force: true });
      boxes.length = 0;
    }, 60_000);

    afterAll(async () => {
      await server?.close();
    });

    /** Plays a script in a fresh sandbox with warden registered (or its plugin installed); returns what the model received. */
    async function play(context: TestContext, steps: ScriptStep[], options: { shell?: boolean; plugin?: boolean; firstTurn?: (info: string) => void } = {}) {
      if (!script) return context.skip(skipReason);
      const box = makeSandbox(name, server.url);
      boxes.push(box);
      configureHarness(name, box, server.url);
      if (options.plugin) await installPlugin(name, box, script);
      else await registerWarden(name, box, { shell: options.shell === true });
      server.play(steps);
      const drive = await driveHarness(name, script, box, 'Do as the scripted steps say.', 150_000);
      const endedAt = Date.now();
      const results = [...server.results];
      const calls = [...server.calls];
      const info = `${name} ${pinned.version} exit ${drive.exitCode}${drive.timedOut ? ' (timed out)' : ''}\nstdout: ${drive.stdout.slice(-1500)}\nstderr: ${drive.stderr.slice(-1500)}\ncalls: ${JSON.stringify(calls)}\nresults: ${results.length}`;
      const record = process.env.WARDEN_HARNESS_RECORD;
      if (record) {
        // What the model was given and got back, for the README's excerpts.
        mkdirSync(record, { recursive: true });
        const slug = `${name}-${context.task.name.replace(/[^A-Za-z0-9]+/g, '-').slice(0, 60)}`;
        writeFileSync(join(record, `${slug}.json`), JSON.stringify({ calls, results: results.map((r) => ({ tool: r.tool, text: r.text })) }, null, 2));
      }
      expect(drive.timedOut, info).toBe(false);
      // What the first turn offered, checked before the script's outcome (which fails anyway without the tools).
      options.firstTurn?.(info);
      expect(results.length, info).toBe(steps.length - 1);
      return { box, drive, results, calls, info, endedAt, toolNames: server.toolNames };
    }

    const mcpResult = (results: ToolResult[], i: number): ToolResult => results[i]!;

    // Claude Code 2.1.332 defers an MCP server's tools behind ToolSearch unless its entry says alwaysLoad (warden setup
    // writes it) or the tools carry _meta "anthropic/alwaysLoad" (warden mcp sets it): the model would first have to search.
    it.runIf(has('first-request') && name === 'claude-code')("the model's first request already offers Warden's tools, not deferred", async (context) => {
      const { results, info } = await play(context, [{ mcp: 'run', args: { shell: 'echo first-turn-$((6*7))' } }, { text: 'Done.' }], {
        firstTurn: (info) => {
          const first = firstTurnTools(server.requests);
          expect(first, `no main request reached the model\n${info}`).toBeDefined();
          const offered = `offered: ${first!.names.join(', ')}; deferred: ${first!.deferred.join(', ') || 'none'}`;
          for (const tool of ['run', 'wait', 'show', 'stop']) {
            expect(first!.names, `the first request lacks mcp__warden__${tool} (${offered})\n${info}`).toContain(`mcp__warden__${tool}`);
            expect(first!.deferred, `mcp__warden__${tool} is deferred behind ToolSearch (${offered})`).not.toContain(`mcp__warden__${tool}`);
          }
        },
      });
      sees(mcpResult(results, 0).text, 'first-turn-42', info);
    }, CASE_MS);

    it.runIf(has('timeout'))('a timeout keeps its output, and the model sees the verdict', async (context) => {
      const { box, results, info } = await play(context, [{ mcp: 'run', args: { shell: 'echo started; echo "warming-$((6*7))" >&2; sleep 30', limit: '2s' } }, { text: 'It timed out.' }]);
      const seen = mcpResult(results, 0).text;
      sees(seen, 'timed-out', info);
      sees(seen, 'started', info);
      sees(seen, 'warming-42', info);
      const run = await showRun(box, await runOf(box, seen));
      expect(run.verdict).toBe('timed-out');
      expect(run.limitMs).toBe(2000);
      expect(run.stdout).toBe('started\n');
      expect(run.stderr).toBe('warming-42\n');
    }, CASE_MS);

    it.runIf(has('big'))('300,000 lines: verdict, exit code, stderr and how to page, within 40,000 characters', async (context) => {
      const { box, results, info } = await play(context, [{ mcp: 'run', args: { shell: 'seq 1 300000; echo "big-run-$((6*7))" >&2; exit $((3+4))' } }, { text: 'Seen.' }]);
      const seen = mcpResult(results, 0).text;
      console.log(`[${name} ${pinned.version}] the model received ${seen.length} characters for 300,000 lines; it begins:\n${seen.slice(0, 400)}`);
      for (const cut of HARNESS_CUTS) sees(seen, cut, `${name} cut the result itself\n${info}`, false);
      expect(seen.length, `${excerpt(seen)}\n${info}`).toBeLessThanOrEqual(MODEL_BUDGET);
      sees(seen, 'failed', info);
      expect(exitCodeIn(seen), excerpt(seen)).toBe(7);
      sees(seen, 'big-run-42', info);
      sees(seen, '299999', info);
      // How to page the rest: the show call with a stream and an offset.
      sees(seen, /show[^\n]{0,200}offset/, info);
      const run = await showRun(box, await runOf(box, seen));
      expect(run.verdict).toBe('failed');
      expect(run.exitCode).toBe(7);
      expect(run.stdoutTruncated).toBe(0);
      expect(run.stdout.length).toBe(1_988_895);
    }, CASE_MS);

    it.runIf(has('yield'))('a yield, then wait: the model is told to call wait, and gets the end', async (context) => {
      const { box, results, info } = await play(context, [
        { mcp: 'run', args: { shell: 'echo first; sleep 4; echo second; exit $((2+3))', limit: '1m', yield: '1s' } },
        (so) => ({ mcp: 'wait', args: { id: runIdIn(so[0]!.text) ?? 'no-id-seen' } }),
        { text: 'It ended.' },
      ]);
      const first = mcpResult(results, 0).text;
      sees(first, 'running', info);
      sees(first, 'first', info);
      sees(first, /wait/, info);
      sees(first, /exit code 75/i, info, false);
      const second = mcpResult(results, 1).text;
      sees(second, 'failed', info);
      sees(second, 'second', info);
      expect(exitCodeIn(second), excerpt(second)).toBe(5);
      const run = await showRun(box, runIdIn(first)!);
      expect(run.verdict).toBe('failed');
      expect(run.stdout).toBe('first\nsecond\n');
    }, CASE_MS);

    it.runIf(has('python'))("a Python crash: the traceback as written, and advice that fits", async (context) => {
      const code = "def f(k):\n    return {'a': 1}[k]\nf('b')\n";
      const { box, results, info } = await play(context, [{ mcp: 'run', args: { python: code } }, { text: 'KeyError.' }]);
      const seen = mcpResult(results, 0).text;
      sees(seen, "KeyError: 'b'", info);
      sees(seen, '&apos;', info, false);
      sees(seen, /traceback/i, info);
      const run = await showRun(box, await runOf(box, seen));
      expect(run.verdict).toBe('failed');
      expect(run.notes.join('\n')).toContain("KeyError: 'b'");
      expect(run.advice).toMatch(/traceback/i);
    }, CASE_MS);

    it.runIf(has('left-live'))('a run left live when the agent exits is stopped, with a note', async (context) => {
      const { box, results, endedAt } = await play(context, [{ mcp: 'run', args: { shell: 'echo live; exec sleep 600', yield: '1s' } }, { text: 'Leaving it.' }]);
      const id = await runOf(box, mcpResult(results, 0).text);
      let run = await showRun(box, id);
      // Waited on (test/kit/until.ts gives up on a hang); how soon is printed, never asserted (a loaded machine is slower).
      await until('the live run to end', async () => (run = await showRun(box, id)).state === 'ended', { everyMs: 250 }).catch(() => undefined);
      console.log(`[${name} ${pinned.version}] the live run ${run.state === 'ended' ? `ended ${Date.parse(run.endedAt!) - endedAt} ms after the agent exited` : 'was still running after the agent exited'}`);
      expect(run.state, `${name}: the run outlived its agent`).toBe('ended');
      expect(run.verdict).toBe('stopped');
      expect(run.notes.join('\n')).toMatch(/agent|client|session/i);
    }, CASE_MS);

    // The issue's other path: Claude Code's own Bash with run_in_background, through the shell hook.
    it.runIf(has('service') && name === 'claude-code')('the shell hook: a dev server in the background is a service of the agent, and its port is free within 5 s of the agent leaving', async (context) => {
      const port = await freePort();
      const { box, results, info, endedAt } = await play(
        context,
        [
          { shell: `"${process.execPath}" "${fixture('dev-server.mjs')}" --port ${port} --delay 300`, background: true },
          { shell: `curl -s --retry 30 --retry-connrefused --retry-delay 1 http://127.0.0.1:${port}/` },
          { text: 'The page is up.' },
        ],
        { shell: true },
      );
      sees(mcpResult(results, 1).text, `hello from the dev server on ${port}`, info);
      const runs = await Promise.all((await history(box)).map((r) => showRun(box, r.id)));
      const service = runs.find((r) => r.argv?.join(' ').includes('dev-server.mjs'));
      expect(service, `no service run in Warden's history\n${info}`).toBeDefined();
      let free = !(await accepts(port));
      while (!free && Date.now() < endedAt + 5_000) {
        await new Promise((r) => setTimeout(r, 50));
        free = !(await accepts(port));
      }
      console.log(`[${name} ${pinned.version}] the hooked dev server's port ${free ? `refused connections ${Date.now() - endedAt} ms after the agent exited` : 'still took connections 5 s after the agent exited'}`);
      expect(free, `port ${port} still open 5 s after the agent exited`).toBe(true);
      const run = await showRun(box, service!.id);
      expect(run.ready, JSON.stringify(run.ready)).toMatchObject({ ports: [expect.objectContaining({ port })] });
      expect(run.verdict).toBe('stopped');
    }, CASE_MS);

    it.runIf(has('service'))('a dev server through run with ready: ready with its port, a page fetched by a second run, the port free within 5 s of the agent leaving', async (context) => {
      const port = await freePort();
      const { box, results, info, endedAt } = await play(context, [
        { mcp: 'run', args: { shell: `"${process.execPath}" "${fixture('dev-server.mjs')}" --port ${port} --delay 300`, ready: { probes: ['port', 'log:/Local:/'] } } },
        { mcp: 'run', args: { argv: ['curl', '-s', `http://127.0.0.1:${port}/`] } },
        { text: 'The page is up.' },
      ]);
      const started = mcpResult(results, 0).text;
      sees(started, new RegExp(`ready after [\\d.]+ (ms|s), listening on ${port}`), info);
      sees(started, 'running', info);
      sees(mcpResult(results, 1).text, `hello from the dev server on ${port}`, info);
      // The agent has exited: its warden mcp is gone, and so, within 5 s, is the server on the port.
      let free = !(await accepts(port));
      while (!free && Date.now() < endedAt + 5_000) {
        await new Promise((r) => setTimeout(r, 50));
        free = !(await accepts(port));
      }
      console.log(`[${name} ${pinned.version}] the dev server's port ${free ? `refused connections ${Date.now() - endedAt} ms after the agent exited` : 'still took connections 5 s after the agent exited'}`);
      expect(free, `${name}: port ${port} still open 5 s after the agent exited`).toBe(true);
      const run = await showRun(box, await runOf(box, started));
      expect(run.verdict).toBe('stopped');
      expect(run.notes.join('\n')).toMatch(/owner|agent/i);
    }, CASE_MS);

    it.runIf(has('hook'))('the shell hook: a failing command goes through Warden, its exit code and stderr reach the model', async (context) => {
      const { box, results, info } = await play(context, [{ shell: 'echo out-line; ls /nonexistent-dir-42' }, { text: 'It failed.' }], { shell: true });
      const seen = mcpResult(results, 0).text;
      sees(seen, 'No such file or directory', info);
      expect(exitCodeIn(seen), excerpt(seen)).toBe(2);
      const runs = await history(box);
      expect(runs.length, `no run in Warden's history: the hook did not route the command\n${excerpt(seen)}\n${info}`).toBe(1);
      const run = await showRun(box, runs[0]!.id);
      expect(run.verdict).toBe('failed');
      expect(run.exitCode).toBe(2);
      expect(run.stderr).toContain('No such file or directory');
      // Warden's answer (verdict and advice), not only the harness's own, and nothing of Warden's own chatter.
      sees(seen, 'failed', info);
      sees(seen, /starting a background Warden host/, info, false);
    }, CASE_MS);

    // Codex's hook yields after 6 s (its shell tool ends a command at 10 s unless told otherwise); the others' after 50 s.
    it.runIf(has('hook-yield') && name === 'codex')('the shell hook: a yielded command exits 0 with the exact command that continues it', async (context) => {
      const nextOf = (text: string) => /<next>(.*)<\/next>/.exec(text)?.[1] ?? 'echo no-next-line-seen';
      const { box, results, info } = await play(
        context,
        [{ shell: 'echo first-part; sleep 9; echo second-part; exit 3' }, (so) => ({ shell: nextOf(so[0]!.text) }), { text: 'It ended.' }],
        { shell: true },
      );
      const first = mcpResult(results, 0).text;
      sees(first, 'running', info);
      sees(first, 'first-part', info);
      // Codex shows the exit status first: a yield is not an error.
      sees(first, 'Process exited with code 0', info);
      sees(first, /<next>"[^"]+" "[^"]+warden\.mjs" wait [0-9a-f]{12} --format shell-results/, info);
      const second = mcpResult(results, 1).text;
      sees(second, 'second-part', info);
      sees(second, 'failed', info);
      sees(second, /<exit_code>3<\/exit_code>/, info);
      const runs = await history(box);
      expect(runs.length, info).toBe(1);
      expect((await showRun(box, runs[0]!.id)).stdout).toBe('first-part\nsecond-part\n');
    }, CASE_MS);

    // Codex's exec_command returns to the model after the call's yield_time_ms (here 2 s, below the hook's 6 s);
    // its hook input lacks it, so the hook reads the call from Codex's transcript and yields before it.
    it.runIf(has('hook-yield') && name === 'codex')("the shell hook: a yield shorter than the hook's answers within the call's yield_time_ms", async (context) => {
      const { box, results, info } = await play(context, [{ shell: 'echo first-part; sleep 9; echo second-part', timeoutMs: 2000 }, { text: 'Yielded.' }], { shell: true });
      const first = mcpResult(results, 0).text;
      // Before: "Process running with session ID ..." and an empty chunk, nothing of Warden.
      sees(first, 'first-part', info);
      sees(first, /<next>"[^"]+" "[^"]+warden\.mjs" wait [0-9a-f]{12} --format shell-results/, info);
      expect((await history(box)).length, info).toBe(1);
    }, CASE_MS);

    // Only Claude Code's shell tool takes a timeout (Bash's timeout, in ms); Codex's exec_command and Gemini's run_shell_command have none.
    it.runIf(has('hook-timeout') && name === 'claude-code')("the shell hook: the harness's own 2 s timeout becomes Warden's limit", async (context) => {
      const { box, results, info } = await play(context, [{ shell: 'echo begun; sleep 30', timeoutMs: 2000 }, { text: 'It timed out.' }], { shell: true });
      const seen = mcpResult(results, 0).text;
      sees(seen, 'timed-out', info);
      sees(seen, 'begun', info);
      const runs = await history(box);
      expect(runs.length, `no run in Warden's history: the hook did not route the command\n${info}`).toBe(1);
      const run = await showRun(box, runs[0]!.id);
      expect(run.verdict).toBe('timed-out');
      expect(run.limitMs).toBe(2000);
      expect(run.stdout).toBe('begun\n');
    }, CASE_MS);

    it.runIf(has('remove'))("setup --remove leaves the user's other settings as they were, and the harness without Warden", async (context) => {
      if (!script) return context.skip(skipReason);
      const files = userFiles(name);
      const box = makeSandbox(name, server.url);
      boxes.push(box);
      configureHarness(name, box, server.url);
      addUserSettings(name, box);
      const read = () => new Map(files.map((f) => [f, readIfAny(join(box.home, f))]));
      const remove = async () => {
        const removed = await execa(process.execPath, [WARDEN_BIN, 'setup', name, '--remove'], { cwd: box.project, env: box.env, extendEnv: false, reject: false, timeout: 60_000 });
        expect(removed.exitCode, removed.stderr).toBe(0);
      };
      // Setup (with the shell hook), then --remove: every file byte for byte as it was.
      const before = read();
      await registerWarden(name, box, { shell: true });
      await remove();
      for (const [file, text] of read()) expect(text, `${file} after setup --shell, then setup --remove`).toBe(before.get(file));

      // Again, with the harness using Warden in between (it rewrites its own files: Claude Code's
      // ~/.claude.json, Gemini CLI's settings.json): the user's settings stay, nothing of Warden does.
      await registerWarden(name, box, { shell: true });
      server.play([{ mcp: 'run', args: { shell: 'echo registered' } }, { text: 'Fine.' }]);
      const first = await driveHarness(name, script, box, 'Do as the scripted steps say.', 150_000);
      expect(server.results[0]?.text ?? `no result: ${first.stderr.slice(-1000)}`).toContain('registered');
      await remove();
      const after = read();
      for (const [file, text] of after) {
        if (text !== null) expect(text, `${file} still names Warden after setup --remove`).not.toMatch(/warden/i);
        if (before.get(file) === null) expect(text, `${file} was created by setup and left by --remove`).toBeNull();
      }
      for (const [file, keys] of userSettingKeys(name)) {
        const was = parseJsonc(before.get(file) ?? '{}');
        const now = parseJsonc(after.get(file) ?? '{}');
        for (const key of keys) expect(now[key], `${file} ${key} after setup --remove`).toEqual(was[key]);
      }
      if (name === 'codex') expect(after.get('.codex/config.toml')).toBe(before.get('.codex/config.toml'));
      if (name === 'gemini') expect(after.get('.gemini/settings.json')).toContain('// my own comment');

      server.play([{ shell: 'echo unrouted' }, { text: 'Done.' }]);
      await driveHarness(name, script, box, 'Do as the scripted steps say.', 150_000);
      expect(server.toolNames.some((t) => t.includes('warden')), `warden tools still offered: ${server.toolNames.join(', ')}`).toBe(false);
      expect(server.results[0]?.text ?? '', 'the shell tool still goes through Warden').toContain('unrouted');
      expect(await history(box), 'the shell tool still goes through Warden').toHaveLength(1);
    }, CASE_MS * 2);

    // ---------------------------------------------------------------- issue 28: show's pages, search, the plugins

    it.runIf(has('page'))("a page of one stream says so, keeps the run's advice, and its next call names the stream", async (context) => {
      const { results, info } = await play(context, [
        { mcp: 'run', args: { shell: 'seq 1 3000; echo big-err-line >&2; exit 1' } },
        (so) => ({ mcp: 'show', args: { id: runIdIn(so[0]!.text) ?? 'no-id-seen', stream: 'stdout', offset: 2000 } }),
        { text: 'Paged.' },
      ]);
      const page = mcpResult(results, 1).text;
      sees(page, /A page of run|"page"/, info);
      sees(page, 'Read stderr for the error the command reported.', info);
      sees(page, /wrote nothing on stderr/, info, false);
      sees(page, /show \\?\{\\?"id\\?": \\?"[0-9a-f]{12}\\?", \\?"stream\\?": \\?"stdout\\?", \\?"offset\\?": 10000\\?\}/, info);
      sees(page, 'big-err-line', info, false);
    }, CASE_MS);

    it.runIf(has('search'))("search finds a Traceback in the middle of 100,000 lines: its line, the offset show takes, the context", async (context) => {
      const { box, results, info } = await play(context, [
        { mcp: 'run', args: { python: 'for i in range(1, 100001):\n    print(f"step {i} ok" if i != 50000 else "Traceback (most recent call last):")' } },
        (so) => ({ mcp: 'search', args: { id: runIdIn(so[0]!.text) ?? 'no-id-seen', pattern: '^Traceback', context: 1 } }),
        { text: 'Found.' },
      ]);
      const found = mcpResult(results, 1).text;
      // Gemini shows the text (50000:OFFSET:...), Claude Code and Codex the JSON ("line":50000).
      sees(found, /50000:\d+:Traceback \(most recent call last\):|"line":\s*50000/, info);
      sees(found, 'step 49999 ok', info);
      sees(found, 'step 50001 ok', info);
      const runs = await history(box);
      expect(runs.length, info).toBe(1);
    }, CASE_MS);

    // Runs as resources: listed (a run from before the session, as a client lists them when it connects) and read by
    // the harness's own resource tools; Gemini CLI 0.61 has none.
    it.runIf(has('resources') && name !== 'gemini')('runs are resources the harness lists and reads: the result and a stream', async (context) => {
      if (!script) return context.skip(skipReason);
      const box = makeSandbox(name, server.url);
      boxes.push(box);
      configureHarness(name, box, server.url);
      await registerWarden(name, box, { shell: false });
      const earlier = JSON.parse(await warden(box, ['run', '--json', '--', 'bash', '-c', 'echo resource-out; echo resource-err >&2'])) as RunJson;
      const [list, read] = name === 'claude-code' ? ['ListMcpResourcesTool', 'ReadMcpResourceTool'] : ['list_mcp_resources', 'read_mcp_resource'];
      server.play([
        { call: list, args: name === 'codex' ? { server: 'warden' } : {} },
        { call: read, args: { server: 'warden', uri: `warden://runs/${earlier.id}` } },
        { call: read, args: { server: 'warden', uri: `warden://runs/${earlier.id}/stderr` } },
        { text: 'Read.' },
      ]);
      const drive = await driveHarness(name, script, box, 'Do as the scripted steps say.', 150_000);
      const info = `${name} ${pinned.version} exit ${drive.exitCode}\n${drive.stderr.slice(-1000)}\ncalls: ${JSON.stringify(server.calls)}`;
      expect(server.results.length, info).toBe(3);
      sees(server.results[0]!.text, `warden://runs/${earlier.id}`, info);
      sees(server.results[0]!.text, /\(completed\)/, info);
      sees(server.results[1]!.text, /<verdict>completed<\/verdict>/, info);
      sees(server.results[1]!.text, 'resource-out', info);
      sees(server.results[2]!.text, 'resource-err', info);
      sees(server.results[2]!.text, 'resource-out', info, false);
    }, CASE_MS);

    it.runIf(has('plugin-validate'))('the plugin: the harness validates it and, installed, lists Warden as its MCP server', async (context) => {
      if (!script) return context.skip(skipReason);
      const box = makeSandbox(name, server.url);
      boxes.push(box);
      configureHarness(name, box, server.url);
      const said = await installPlugin(name, box, script);
      const integrations = join(dirname(WARDEN_BIN), '..', 'integrations');
      const cli = (args: string[]) => execa(join(box.home, '..', 'bin', name === 'claude-code' ? 'claude' : name), args, { cwd: box.project, env: box.env, extendEnv: false, reject: false, timeout: 120_000 });
      if (name === 'claude-code') {
        for (const dir of [integrations, join(integrations, 'claude-code')]) {
          const validated = await cli(['plugin', 'validate', '--strict', dir]);
          expect(validated.exitCode, `${dir}\n${validated.stdout}\n${validated.stderr}`).toBe(0);
          expect(validated.stdout).toContain('Validation passed');
        }
        const listed = await cli(['plugin', 'list']);
        expect(`${listed.stdout}${listed.stderr}`, said).toMatch(/warden@warden/);
      } else if (name === 'codex') {
        const servers = JSON.parse((await cli(['mcp', 'list', '--json'])).stdout) as { name: string; enabled: boolean; transport: { command: string; args: string[]; env_vars: string[] }; tool_timeout_sec: number }[];
        const warden = servers.find((s) => s.name === 'warden');
        expect(warden, JSON.stringify(servers)).toMatchObject({ enabled: true, transport: { command: 'warden', args: ['mcp'] }, tool_timeout_sec: 120 });
        expect(warden!.transport.env_vars).toEqual(expect.arrayContaining(['WARDEN_STATE_DIR', 'XDG_STATE_HOME']));
        const plugins = JSON.parse((await cli(['plugin', 'list', '--json'])).stdout) as { installed: { pluginId: string; enabled: boolean }[] };
        expect(plugins.installed).toEqual([expect.objectContaining({ pluginId: 'warden@warden', enabled: true })]);
      } else {
        const validated = await cli(['extensions', 'validate', join(integrations, 'gemini')]);
        expect(`${validated.stdout}${validated.stderr}`).toContain('successfully validated');
        const listed = await cli(['mcp', 'list']);
        expect(`${listed.stdout}${listed.stderr}`).toMatch(/✓ warden \(from warden\): warden mcp \(stdio\) - Connected/);
        // The extension's setting carries the state dir past its MCP server's scrubbed environment.
        expect(readFileSync(join(box.home, '.gemini', 'extensions', 'warden', '.env'), 'utf8')).toBe(`WARDEN_STATE_DIR=${box.stateDir}\n`);
      }
    }, CASE_MS);

    it.runIf(has('plugin'))('the plugin: run, okExit, search by the id it gave, and the shell tool through its hook', async (context) => {
      const { box, results, info, toolNames } = await play(
        context,
        [
          { mcp: 'run', args: { shell: 'seq 1 3000; printf "Traceback (most recent call last):\\n  KeyError: x\\n" >&2; exit 1' } },
          { mcp: 'run', args: { argv: ['grep', 'no-such-line', '/dev/null'], okExit: 1 } },
          (so) => ({ mcp: 'search', args: { id: runIdIn(so[0]!.text) ?? 'no-id-seen', pattern: 'KeyError', context: 1 } }),
          { shell: 'echo via-plugin-hook; exit 4' },
          { text: 'Done.' },
        ],
        { plugin: true },
      );
      expect(toolNames.some((t) => /warden.*__search$|^mcp_warden_search$/.test(t)), toolNames.join(', ')).toBe(true);
      sees(mcpResult(results, 0).text, 'failed', info);
      sees(mcpResult(results, 1).text, 'completed', info);
      sees(mcpResult(results, 1).text, /ok-exit 1/, info);
      const found = mcpResult(results, 2).text;
      sees(found, /2:\d+: {2}KeyError: x|"line":\s*2/, info);
      sees(found, 'Traceback (most recent call last):', info);
      const hooked = mcpResult(results, 3).text;
      sees(hooked, 'via-plugin-hook', info);
      sees(hooked, /<verdict>failed<\/verdict>/, info);
      const runs = await history(box);
      expect(runs.length, info).toBe(3);
      const viaHook = await showRun(box, runs[0]!.id);
      expect(viaHook.stdout).toBe('via-plugin-hook\n');
    }, CASE_MS);

    // Claude Code's hook yields after 50 s, Codex's after 6 s: the run is still going when the session ends.
    it.runIf(has('plugin-session-end') && name !== 'gemini')("the plugin's SessionEnd hook stops the session's runs, with its note", async (context) => {
      const { box, info } = await play(context, [{ shell: 'echo started-long; exec sleep 600', ...(name === 'claude-code' ? { timeoutMs: 600_000 } : {}) }, { text: 'Leaving it.' }], { plugin: true });
      const runs = await history(box);
      expect(runs.length, info).toBe(1);
      let run = await showRun(box, runs[0]!.id);
      for (let i = 0; i < 60 && run.state !== 'ended'; i++) {
        await new Promise((r) => setTimeout(r, 250));
        run = await showRun(box, runs[0]!.id);
      }
      expect(run.verdict, info).toBe('stopped');
      expect(run.notes.join('\n'), info).toMatch(/Stopped with the other live runs of process \d+ and of those under it \(warden stop --owner\): its agent session ended\./);
    }, CASE_MS);

    // A monitor is armed in an interactive session only: Claude Code in a pseudo-terminal, its shell tool starting a
    // run that yields (owned by the agent, as the hook's are), the model's turn ending, then the run's end. 2.1.197
    // arms no plugin monitor at all (seen here: no monitor process ever starts), so the later version alone.
    it.runIf(has('plugin-monitor') && name === 'claude-code' && pinned === CLAUDE_CODE_LATER)("the plugin's monitor tells the model when a run it left going ends", async (context) => {
      if (!script) return context.skip(skipReason);
      const box = makeSandbox(name, server.url);
      boxes.push(box);
      configureHarness(name, box, server.url);
      await installPlugin(name, box, script);
      server.play([{ shell: "warden run --owner-pid $PPID --yield 1s -- bash -c 'sleep 4; echo left-going-42'" }, { text: 'Waiting for it.' }, { text: 'Noted its end.' }]);
      const notified = () => server.requests.some((r) => JSON.stringify(r.body).includes('ended: completed'));
      const drive = await driveInteractive(script, box, 'Do as the scripted steps say.', notified);
      const bodies = server.requests.map((r) => JSON.stringify(r.body));
      const event = bodies.map((b) => /Monitor event[^]*?<event>(run [0-9a-f]{12} ended: [^<]*)<\/event>/.exec(b)?.[1]).find((e) => e !== undefined);
      expect(drive.done, `no monitor event reached the model\n${drive.screen.slice(-1500)}`).toBe(true);
      console.log(`[${name} ${pinned.version}] the monitor's event as the model got it: ${event}`);
      expect(event).toMatch(/^run [0-9a-f]{12} ended: completed, exit 0 after [\d.]+ s of a 10 min limit: bash -c sleep 4; echo left-going-42 \(owner claude(\.exe)?, pid \d+\)/);
    }, CASE_MS);

    it.runIf(has('plugin-remove'))('setup --plugin --remove: the harness without Warden, its files as they were', async (context) => {
      if (!script) return context.skip(skipReason);
      const box = makeSandbox(name, server.url);
      boxes.push(box);
      configureHarness(name, box, server.url);
      addUserSettings(name, box);
      const files = userFiles(name);
      const read = () => new Map(files.map((f) => [f, readIfAny(join(box.home, f))]));
      const before = read();
      // Installed, then removed: every file byte for byte as it was; but the harness's own commands write their
      // state as any call of theirs does: Claude Code's ~/.claude.json (startups, caches), and Gemini CLI migrates
      // its settings.json (general.disableAutoUpdate becomes enableAutoUpdate, objects reflowed). There the user's
      // own settings stay (below, after a drive too).
      await installPlugin(name, box, script);
      await installPlugin(name, box, script, { remove: true });
      for (const [file, text] of read()) {
        if (name === 'gemini' && file === '.gemini/settings.json') expect(text).toContain('// my own comment');
        else if (name === 'claude-code' && file === '.claude.json') expect(parseJsonc(text ?? '{}').hasCompletedOnboarding).toBe(true);
        // (Claude Code adds DISABLE_AUTOUPDATER to its env itself, from the sandbox's environment: setup gives the file
        // back byte for byte only when nothing but the plugin's entries changed, checked in src/cli/setup/.)
        else if (name === 'claude-code' && file === '.claude/settings.json') {
          expect(text).not.toMatch(/warden/i);
          expect(parseJsonc(text ?? '{}').permissions).toEqual(parseJsonc(before.get(file) ?? '{}').permissions);
        }
        else expect(text, `${file} after setup --plugin, then --plugin --remove`).toBe(before.get(file));
      }
      // Again, with the harness using the plugin in between (it rewrites its own files: Claude Code's ~/.claude.json,
      // Gemini CLI's settings.json): the user's settings stay, nothing of Warden does.
      await installPlugin(name, box, script);
      server.play([{ mcp: 'run', args: { shell: 'echo plugged' } }, { text: 'Fine.' }]);
      await driveHarness(name, script, box, 'Do as the scripted steps say.', 150_000);
      expect(server.results[0]?.text ?? 'no result').toContain('plugged');
      await installPlugin(name, box, script, { remove: true });
      const after = read();
      for (const [file, text] of after) {
        if (text === null) continue;
        // Claude Code 2.1.332 keeps a plugin the user uninstalled in its own declinedPlugins list: its bookkeeping, not Warden's.
        const named = file === '.claude.json' ? JSON.stringify({ ...parseJsonc(text), declinedPlugins: undefined }) : text;
        expect(named, `${file} still names Warden after --plugin --remove`).not.toMatch(/warden/i);
      }
      for (const [file, keys] of userSettingKeys(name)) {
        const was = parseJsonc(before.get(file) ?? '{}');
        const now = parseJsonc(after.get(file) ?? '{}');
        for (const key of keys) expect(now[key], `${file} ${key} after --plugin --remove`).toEqual(was[key]);
      }
      if (name === 'codex') expect(after.get('.codex/config.toml')).toBe(before.get('.codex/config.toml'));

      server.play([{ shell: 'echo unrouted' }, { text: 'Done.' }]);
      await driveHarness(name, script, box, 'Do as the scripted steps say.', 150_000);
      expect(server.toolNames.some((t) => t.includes('warden')), `warden tools still offered: ${server.toolNames.join(', ')}`).toBe(false);
      expect(await history(box), 'the shell tool still goes through Warden').toHaveLength(1);
    }, CASE_MS * 2);

    it.runIf(has('wait-for-previous') && name === 'gemini')("Gemini's wait_for_previous is accepted", async (context) => {
      const { results, info, toolNames } = await play(context, [{ mcp: 'run', args: { shell: 'echo in-order', wait_for_previous: true } }, { text: 'Fine.' }]);
      expect(toolNames).toContain('mcp_warden_run');
      const seen = mcpResult(results, 0).text;
      sees(seen, /takes no argument/, info, false);
      sees(seen, 'in-order', info);
      sees(seen, 'completed', info);
    }, CASE_MS);
  });
}
