// `--help` for every command and subcommand that `warden --help` lists: each
// exits 0 and prints its own usage, without starting a host or touching the
// state dir. The list comes from the top-level help itself, so a command added
// there without a help row fails here.

import { execa } from 'execa';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { main } from '../warden';
import { HELP } from './main';

const BIN = resolve(__dirname, '../../bin/warden.mjs');

/** `warden ARGS` in this process, with a state dir that must stay empty. */
async function warden(args: string[]) {
  const stateDir = join(mkdtempSync(join(tmpdir(), 'warden-help-')), 'state');
  const saved = process.env.WARDEN_STATE_DIR;
  process.env.WARDEN_STATE_DIR = stateDir;
  let out = '';
  let err = '';
  try {
    const status = await main(args, { out: (t) => void (out += t), err: (t) => void (err += t), onSignal: () => () => undefined });
    return { status, out, err, touched: existsSync(stateDir) };
  } finally {
    if (saved === undefined) delete process.env.WARDEN_STATE_DIR;
    else process.env.WARDEN_STATE_DIR = saved;
  }
}

/** `run`, `history prune`, ...: the first word of each line of the Commands section, and a second when it is a subcommand. */
function listedCommands(): string[][] {
  const section = HELP.slice(HELP.indexOf('Commands:'), HELP.indexOf('\n\n', HELP.indexOf('Commands:')));
  const commands = new Map<string, string[]>();
  for (const line of section.split('\n')) {
    const m = /^ {2}([a-z][a-z0-9-]*)(?: ([a-z][a-z-]*)(?=\s|\||$))?/.exec(line);
    if (!m) continue;
    commands.set(m[1]!, [m[1]!]);
    if (m[2]) commands.set(`${m[1]} ${m[2]}`, [m[1]!, m[2]]);
  }
  return [...commands.values()];
}

describe('warden COMMAND --help', () => {
  const commands = listedCommands();

  it('finds the commands in the top-level help', () => {
    expect(commands.map((c) => c.join(' '))).toEqual(expect.arrayContaining(['run', 'wait', 'stop', 'extend', 'list', 'show', 'sessions', 'serve', 'mcp', 'history', 'history prune']));
  });

  it.each(commands.map((c) => [c.join(' '), c]))('%s --help: exit 0, its own usage, no host started', async (_name, words) => {
    const r = await warden([...words, '--help']);
    expect(r.err).toBe('');
    expect(r.status).toBe(0);
    expect(r.out).toMatch(new RegExp(`^Usage: warden ${words.join(' ')}\\b`));
    expect(r.touched).toBe(false);
    // -h and `warden help ...` say the same.
    expect((await warden([...words, '-h'])).out).toBe(r.out);
    expect((await warden(['help', ...words])).out).toBe(r.out);
  });

  it('--help after other words still asks for help, but not after --, and not after run COMMAND', async () => {
    expect((await warden(['stop', 'abc', '--help'])).out).toMatch(/^Usage: warden stop\b/);
    expect((await warden(['serve', '--port', '0', '--help'])).out).toMatch(/^Usage: warden serve\b/);
    const passed = await warden(['run', '--embedded', '--', 'printf', '%s', '--help']);
    expect(passed.status).toBe(0);
    expect(passed.out).toContain('--help');
    expect(passed.out).not.toContain('Usage:');
  });

  it('help for a command that does not exist is one line and 125', async () => {
    const r = await warden(['help', 'nosuch']);
    expect(r.status).toBe(125);
    expect(r.err).toBe('warden: No command "nosuch" (see warden --help).\n');
  });

  it('warden history alone names its subcommand', async () => {
    const r = await warden(['history']);
    expect(r.status).toBe(125);
    expect(r.err).toBe('warden: warden history takes a subcommand: prune (see warden history --help).\n');
  });

  it('through the bin: warden serve --help exits 0', async () => {
    const r = await execa(process.execPath, [BIN, 'serve', '--help'], { reject: false, stdin: 'ignore', env: { WARDEN_STATE_DIR: mkdtempSync(join(tmpdir(), 'warden-help-bin-')) } });
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toMatch(/^Usage: warden serve\b/);
  });
});
