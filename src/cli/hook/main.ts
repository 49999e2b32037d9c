// The entry of the hook's own bundle (out/cli/*/hook.mjs): bin/warden.mjs
// loads it for `warden hook` without the rest of the CLI, so a call costs
// about what starting Node does.

import { readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CLI_ERROR_EXIT } from '../../shared/errors';
import { defaultHookEnv, HOOK_HELP, parseHookArgs, runHook } from './hook';

/** All of stdin, read at once (a hook's input is one small JSON document). */
function readStdin(): string {
  try {
    return readFileSync(0, 'utf8');
  } catch (error) {
    // No stdin at all (closed): an empty input, which the hook says is not JSON.
    if ((error as NodeJS.ErrnoException).code === 'EAGAIN') return readFileSync('/dev/stdin', 'utf8');
    return '';
  }
}

export async function hookMain(args: string[]): Promise<number> {
  if (args.includes('--help') || args.includes('-h')) {
    process.stdout.write(`${HOOK_HELP}\n`);
    return 0;
  }
  const parsed = parseHookArgs(args);
  if (typeof parsed === 'string') {
    process.stderr.write(`warden: ${parsed}\n`);
    return CLI_ERROR_EXIT;
  }
  try {
    const answer = await runHook(parsed.harness, parsed, readStdin(), defaultHookEnv(dirname(fileURLToPath(import.meta.url))));
    if (answer.stdout) process.stdout.write(answer.stdout);
    return answer.exitCode;
  } catch (error) {
    // Never block the agent on Warden's own failure: the command goes on as it was, and the user is told.
    const message = error instanceof Error ? error.message : String(error);
    process.stdout.write(`${JSON.stringify({ systemMessage: `warden: the hook failed (${message}); the command runs as it was, without Warden.` })}\n`);
    return 0;
  }
}

export const main = hookMain;
