// (x) What the model receives in each real agent CLI for a run printing
// 300,000 lines (`seq 1 300000`, 1,988,895 characters, then one line on
// stderr and exit 7) through `warden mcp`: Claude Code, Codex and Gemini CLI
// at the tests' pinned versions (test/harness/install.ts, cached outside
// node_modules), driven by the tests' scripted model (test/harness/model-server.ts)
// in a temporary HOME. Baselines: the whole output the run printed, and what
// the same harness's own shell tool (Bash, exec_command, run_shell_command)
// gives its model for the same command, without Warden (printed, no target).

import { rmSync } from 'node:fs';
import { dirname } from 'node:path';
import { stopBackgroundHosts } from '../src/cli/testkit';
import { configureHarness, driveHarness, makeSandbox, registerWarden, type HarnessName, type Sandbox } from '../test/harness/harnesses';
import { ensureHarness, PINNED } from '../test/harness/install';
import { startModelServer } from '../test/harness/model-server';
import { check, type Figure } from './lib';

// No $(( )): Gemini CLI's own shell tool refuses it ("Command injection detected"). The stderr line
// (big-run-42) and the exit code are not written out in the command, so seeing them means the output.
const COMMAND = "seq 1 300000; printf 'big-run-%s\\n' 42 >&2; exit 7";
const WHOLE = 1_988_895;
const BUDGET = 40_000;
/** Each harness's own marks of a result it cut or moved to a file. */
const HARNESS_CUTS = [/<persisted-output>/, /tokens truncated/, /Output too large/, /exceeds maximum allowed tokens/];

export async function benchHarnesses(): Promise<Figure> {
  const lines: string[] = [`baseline: the run printed ${WHOLE.toLocaleString('en-US')} characters on stdout (300,000 lines) and 11 on stderr, exit 7`];
  const checks: Figure['checks'] = [];
  const server = await startModelServer();
  try {
    for (const name of ['claude-code', 'codex', 'gemini'] as HarnessName[]) {
      const pinned = PINNED[name];
      const got = await ensureHarness(pinned);
      if ('skip' in got) {
        lines.push(`${name} ${pinned.version}: not measured (${got.skip})`);
        continue;
      }
      let box: Sandbox | undefined;
      try {
        box = makeSandbox(name, server.url);
        configureHarness(name, box, server.url);
        await registerWarden(name, box, { shell: false });
        server.play([{ mcp: 'run', args: { shell: COMMAND } }, { text: 'Seen.' }]);
        const drive = await driveHarness(name, got.script, box, 'Run it.', 150_000);
        const seen = server.results[0]?.text;
        if (seen === undefined) {
          lines.push(`${name} ${pinned.version}: no tool result reached the model (exit ${drive.exitCode}: ${drive.stderr.split('\n').slice(-2).join(' ')})`);
          checks.push(check(`${name}: a result reached the model`, false));
          continue;
        }
        const cut = HARNESS_CUTS.find((re) => re.test(seen));
        const verdict = /failed/.test(seen);
        const exit = /exit(ed)?[ _]?(with )?code\W{0,3}7\b/i.test(seen);
        const stderr = seen.includes('big-run-42');
        const paging = /show[^\n]{0,200}offset/.test(seen);
        lines.push(
          `${name} ${pinned.version}: ${seen.length.toLocaleString('en-US')} characters (${((seen.length / WHOLE) * 100).toFixed(2)}% of the output)` +
            `; verdict ${verdict ? 'seen' : 'MISSING'}, exit code ${exit ? 'seen' : 'MISSING'}, stderr ${stderr ? 'seen' : 'MISSING'}, paging ${paging ? 'seen' : 'MISSING'}` +
            `${cut ? `; the harness cut it itself (${cut.source})` : ''}`,
        );
        lines.push(`    begins: ${JSON.stringify(seen.slice(0, 160))}`);
        // The harness's own shell tool, in a sandbox without Warden.
        const own = makeSandbox(name, server.url);
        try {
          configureHarness(name, own, server.url);
          server.play([{ shell: COMMAND }, { text: 'Seen.' }]);
          await driveHarness(name, got.script, own, 'Run it.', 150_000);
          const plain = server.results[0]?.text;
          if (plain === undefined) lines.push(`    its own shell tool: no result reached the model`);
          else {
            const plainCut = HARNESS_CUTS.find((re) => re.test(plain));
            lines.push(
              `    its own shell tool (${server.results[0]!.tool}): ${plain.length.toLocaleString('en-US')} characters; exit code ${/exit(ed)?[ _]?(with )?code\W{0,3}7\b/i.test(plain) ? 'seen' : 'not seen'}, stderr ${plain.includes('big-run-42') ? 'seen' : 'not seen'}${plainCut ? `, cut by the harness (${plainCut.source})` : ''}; begins ${JSON.stringify(plain.slice(0, 100))}`,
            );
          }
        } finally {
          rmSync(dirname(own.home), { recursive: true, force: true });
        }
        checks.push(check(`${name}: <= ${BUDGET.toLocaleString('en-US')} characters, not cut by the harness, verdict, exit, stderr and paging seen`, seen.length <= BUDGET && !cut && verdict && exit && stderr && paging));
      } finally {
        if (box) {
          await stopBackgroundHosts([box.stateDir]).catch(() => undefined);
          rmSync(dirname(box.home), { recursive: true, force: true });
        }
      }
    }
  } finally {
    await server.close();
  }
  return { title: '(x) what the model receives for 300,000 lines, per harness (warden mcp)', lines, checks };
}
