// The manual names only commands and flags that exist: every `warden COMMAND`
// written in README.md or docs/*.md (in code, inline or fenced) is a command
// of `warden --help`, and each flag written after it is in that command's own
// `--help` (or the subcommand's: `warden k8s job --help`). Every other flag
// the docs write anywhere is some warden command's, or one of the few other
// programs' flags listed below, named in the same paragraph. The help texts
// are the real CLI's, asked in this process as help.test.ts asks them.

import { readFileSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { main } from '../src/warden';
import { HELP } from '../src/cli/main';
import { COMMAND_HELP } from '../src/cli/help';

const ROOT = resolve(__dirname, '..');

/** The docs this test holds to the CLI. */
function docFiles(): string[] {
  const docs = readdirSync(join(ROOT, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => join('docs', name));
  return ['README.md', ...docs.sort()];
}

/**
 * Flags of programs other than warden that the docs write, each with the
 * program (as the docs name it) that must appear in the same paragraph.
 */
const OTHER_PROGRAMS: Readonly<Record<string, RegExp>> = {
  '--unix-socket': /\bcurl\b/,
  '--user': /\bunshare\b/,
  '--map-root-user': /\bunshare\b/,
  '--pid': /\bunshare\b/,
  '--root': /\bdpkg\b/,
  '--no-install-recommends': /\bapt-get\b/,
  '--strict': /\bclaude plugin validate\b/,
  '--inspect': /\bElectron\b|\bNode\b/,
  '--inspect-brk': /\bElectron\b|\bNode\b/,
  '--packaged': /scripts\/fuses\.mjs/,
  '--NAME': /\bprlimit\b/,
  '--dangerously-bypass-approvals-and-sandbox': /\bCodex\b/,
};

interface Paragraph {
  file: string;
  /** 1-based line the paragraph (or fenced block) starts on. */
  line: number;
  text: string;
  /** The code in it: each inline span, or each line of a fenced block. */
  code: string[];
}

/** A markdown file cut into paragraphs and fenced blocks, with the code of each. */
function paragraphs(file: string, text: string): Paragraph[] {
  const out: Paragraph[] = [];
  const lines = text.split('\n');
  let i = 0;
  while (i < lines.length) {
    if (lines[i]!.trim() === '') {
      i++;
      continue;
    }
    const start = i;
    if (lines[i]!.startsWith('```')) {
      i++;
      const body: string[] = [];
      while (i < lines.length && !lines[i]!.startsWith('```')) body.push(lines[i++]!);
      i++;
      out.push({ file, line: start + 1, text: body.join('\n'), code: body });
      continue;
    }
    const body: string[] = [];
    while (i < lines.length && lines[i]!.trim() !== '' && !lines[i]!.startsWith('```')) body.push(lines[i++]!);
    const joined = body.join('\n');
    const code = [...joined.matchAll(/`([^`]+)`/g)].map((m) => m[1]!.replace(/\s+/g, ' '));
    out.push({ file, line: start + 1, text: joined, code });
  }
  return out;
}

/** Shell-like words: quotes keep a word whole; a # at a word's start ends the line. */
function words(code: string): string[] {
  const out: string[] = [];
  const re = /'[^']*'|"(?:[^"\\]|\\.)*"|[^\s'"]+(?:(?:'[^']*'|"(?:[^"\\]|\\.)*")[^\s'"]*)*/g;
  for (const m of code.matchAll(re)) {
    if (m[0].startsWith('#')) break;
    out.push(m[0]);
  }
  return out;
}

/** `warden`, `npx warden`'s last word, or a path to the bin: `"/usr/lib/node_modules/warden/bin/warden.mjs"`. */
function isWarden(word: string): boolean {
  const bare = word.replace(/^["']|["']$/g, '');
  return bare === 'warden' || /(^|\/)warden\.mjs$/.test(bare) || bare === '/usr/bin/warden';
}

/** Words that end what warden reads: the end of its options, a pipe, a list, a redirection. */
const STOPS = new Set(['--', '|', '||', '&&', ';', '&', '>', '<', '2>&1']);

interface Use {
  /** `run`, `k8s job`, `remote`, ... */
  command: string;
  flags: string[];
}

/** Flags warden takes before any command (`warden --help` says so). */
const GLOBAL_FLAGS = new Set(['--remote', '--help', '--version']);

/** Words that may come before a command line's `warden`. */
const LEADS = new Set(['$', 'npx', 'sudo', '-E', 'exec']);

/**
 * Each `warden [--remote NAME] COMMAND [SUB] ...` in one line of code: the
 * command (with its subcommand where it has a help of its own, as `known`
 * lists them) and the flags written before the words stop being warden's.
 * Where the line starts with warden (a command line), `command` is the word
 * as written, so a command that does not exist is seen; elsewhere (warden in
 * a line of output) only a known command counts.
 */
function uses(code: string, known: ReadonlySet<string>): Use[] {
  const ws = words(code);
  const found: Use[] = [];
  for (let i = 0; i < ws.length; i++) {
    if (!isWarden(ws[i]!)) continue;
    let j = i + 1;
    const globalFlags: string[] = [];
    while (ws[j] === '--remote') {
      globalFlags.push('--remote');
      j += 2;
    }
    const command = ws[j];
    const commandLine = ws.slice(0, i).every((w) => LEADS.has(w));
    if (command !== undefined && !commandLine && !known.has(command)) continue;
    if (command === undefined || !/^[a-z][a-z0-9-]*$/.test(command)) {
      if (globalFlags.length > 0 || (command !== undefined && command.startsWith('-'))) {
        found.push({ command: '', flags: [...globalFlags, ...(command?.startsWith('-') ? [command.split('=')[0]!] : [])] });
      }
      continue;
    }
    const sub = ws[j + 1];
    const key = sub !== undefined && known.has(`${command} ${sub}`) ? `${command} ${sub}` : command;
    const flags = [...globalFlags];
    for (let k = j + 1; k < ws.length; k++) {
      const w = ws[k]!;
      if (STOPS.has(w) || isWarden(w)) break;
      const ended = w.endsWith(';');
      const bare = w.replace(/[;,)]+$/, '');
      if (/^--[a-zA-Z][a-zA-Z0-9-]*(=|$)/.test(bare)) flags.push(bare.split('=')[0]!);
      else if (/^-[a-zA-Z]$/.test(bare)) flags.push(bare);
      if (ended) break;
    }
    found.push({ command: key, flags });
  }
  return found;
}

/** Whether `flag` is written in `help` as a flag of its own (not a prefix of a longer one). */
function helpHas(help: string, flag: string): boolean {
  const escaped = flag.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return new RegExp(`(^|[^A-Za-z0-9-])${escaped}(?![A-Za-z0-9-])`).test(help);
}

/** `warden ARGS` in this process; its stdout. */
async function helpText(args: string[]): Promise<string> {
  let out = '';
  const status = await main(args, { out: (t) => void (out += t), err: () => undefined, onSignal: () => () => undefined });
  if (status !== 0) throw new Error(`warden ${args.join(' ')} exited ${status}`);
  return out;
}

/** The commands `warden --help` lists: the first word of each line of its Commands section. */
function listedCommands(): string[] {
  const section = HELP.slice(HELP.indexOf('Commands:'), HELP.indexOf('\n\n', HELP.indexOf('Commands:')));
  return [...new Set([...section.matchAll(/^ {2}([a-z][a-z0-9-]*)/gm)].map((m) => m[1]!))];
}

describe('the pieces that read the docs', () => {
  const known = new Set(['run', 'wait', 'stop', 'search', 'list', 'k8s', 'k8s job', 'history', 'history prune']);

  it.each([
    ['warden run --limit 30s -- python3 train.py --fast', [{ command: 'run', flags: ['--limit'] }]],
    ["warden run --shell -- 'grep -r TODO src | wc -l'", [{ command: 'run', flags: ['--shell'] }]],
    ['warden --remote gpu wait ID; warden --remote gpu stop ID --force', [{ command: 'wait', flags: ['--remote'] }, { command: 'stop', flags: ['--remote', '--force'] }]],
    ['npx warden search 3f2a 1 -F -i -C 5 # --not-this', [{ command: 'search', flags: ['-F', '-i', '-C'] }]],
    ['warden k8s job --image IMG -- CMD', [{ command: 'k8s job', flags: ['--image'] }]],
    ['warden history prune --max-runs=10000 | head', [{ command: 'history prune', flags: ['--max-runs'] }]],
    ['"/usr/bin/node" "/opt/warden/bin/warden.mjs" wait 3f2a --format shell-results', [{ command: 'wait', flags: ['--format'] }]],
    ['warden --version', [{ command: '', flags: ['--version'] }]],
    ['warden frobnicate --now', [{ command: 'frobnicate', flags: ['--now'] }]],
    ['$ sudo -E warden frobnicate', [{ command: 'frobnicate', flags: [] }]],
    ['warden: note: warden there exited 75; warden list --live', [{ command: 'list', flags: ['--live'] }]],
    ['warden-sentinel -c eval', []],
    ['the warden command', []],
  ])('%s', (code, expected) => {
    expect(uses(code, known)).toEqual(expected);
  });

  it.each([
    ['--limit D   stop it', '--limit', true],
    ['--limit-x D', '--limit', false],
    ['use --lease', '--lease', true],
    ['[--since start]', '--since', true],
    ['-c CODE', '-c', true],
    ['--core', '-c', false],
  ])('helpHas(%j, %s)', (help, flag, has) => {
    expect(helpHas(help, flag)).toBe(has);
  });

  it('cuts a file into paragraphs and fenced blocks, with the code of each', () => {
    const text = 'Run `warden run\n--limit 1s` now.\n\n```sh\nwarden list\nwarden show ID\n```\nafter\n';
    expect(paragraphs('x.md', text)).toEqual([
      { file: 'x.md', line: 1, text: 'Run `warden run\n--limit 1s` now.', code: ['warden run --limit 1s'] },
      { file: 'x.md', line: 4, text: 'warden list\nwarden show ID', code: ['warden list', 'warden show ID'] },
      { file: 'x.md', line: 8, text: 'after', code: [] },
    ]);
  });
});

describe('every command and flag the docs name is in --help', () => {
  const help = new Map<string, string>();
  let everyHelp = '';
  const all = docFiles().flatMap((file) => paragraphs(file, readFileSync(join(ROOT, file), 'utf8')));

  beforeAll(async () => {
    help.set('', await helpText(['--help']));
    for (const command of [...listedCommands(), ...Object.keys(COMMAND_HELP)]) {
      if (!help.has(command)) help.set(command, await helpText([...command.split(' '), '--help']));
    }
    everyHelp = [...help.values()].join('\n');
  });

  it('reads the docs and finds the commands they use', () => {
    const commands = new Set(all.flatMap((p) => p.code.flatMap((c) => uses(c, new Set(help.keys())).map((u) => u.command))));
    expect([...commands]).toEqual(expect.arrayContaining(['run', 'wait', 'stop', 'setup', 'mcp', 'serve', 'search', 'remote', 'k8s job']));
    for (const flag of GLOBAL_FLAGS) expect(helpHas(help.get('')!, flag), flag).toBe(true);
  });

  it('documents every command warden --help lists', () => {
    const used = new Set(all.flatMap((p) => p.code.flatMap((c) => uses(c, new Set(help.keys())).map((u) => u.command.split(' ')[0]))));
    expect(listedCommands().filter((command) => !used.has(command))).toEqual([]);
  });

  it('names only commands that exist, each with flags its --help has', () => {
    const subcommands = new Set(help.keys());
    const wrong: string[] = [];
    for (const p of all) {
      for (const code of p.code) {
        for (const use of uses(code, subcommands)) {
          const text = help.get(use.command);
          if (text === undefined) {
            wrong.push(`${p.file}:${p.line}: warden ${use.command}: no such command (${code})`);
            continue;
          }
          for (const flag of use.flags) {
            if (!helpHas(text, flag) && !GLOBAL_FLAGS.has(flag)) wrong.push(`${p.file}:${p.line}: warden ${use.command} ${flag}: not in its --help (${code})`);
          }
        }
      }
    }
    expect(wrong).toEqual([]);
  });

  it("writes no other flag that is neither some warden command's nor a listed program's, named beside it", () => {
    const wrong: string[] = [];
    for (const p of all) {
      for (const m of p.text.matchAll(/(?<![A-Za-z0-9-])--[a-zA-Z][a-zA-Z0-9-]*/g)) {
        const flag = m[0];
        if (helpHas(everyHelp, flag)) continue;
        const program = OTHER_PROGRAMS[flag];
        if (program === undefined) wrong.push(`${p.file}:${p.line}: ${flag} is in no warden --help, nor listed as another program's`);
        else if (!program.test(p.text)) wrong.push(`${p.file}:${p.line}: ${flag} is listed as ${program}'s, which this paragraph does not name`);
      }
    }
    expect(wrong).toEqual([]);
  });
});
