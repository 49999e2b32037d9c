// The name a hooked agent's runs are owned by, as a person reads it in the
// app and in a note ("Its owner, gemini (pid 4242), went away"): the
// process's command name, or, for an interpreter running a script (Gemini
// CLI runs as `node .../gemini-cli/dist/index.js`), the script's command:
// the bin its package names for that file, else the file's own name.

import { existsSync, readFileSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';

const INTERPRETERS = /^(node|nodejs|bun|deno|python[0-9.]*|ruby|perl|php)$/;
/** Entry files whose name says nothing of the program. */
const GENERIC = /^(index|main|cli|bin|run|entry|start|app|__main__)$/;

function readArgv(pid: number): string[] {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter((arg, i, all) => arg !== '' || i < all.length - 1);
  } catch {
    return [];
  }
}

function readComm(pid: number): string | null {
  try {
    return readFileSync(`/proc/${pid}/comm`, 'utf8').trim() || null;
  } catch {
    return null;
  }
}

/** The command a script is known by: the bin its package.json names for it, else its file name without extension. */
export function scriptCommand(script: string): string {
  const own = basename(script).replace(/\.(m?js|cjs|ts|py|rb|pl|php)$/, '');
  const file = resolve(script);
  for (let dir = dirname(file), i = 0; i < 8; i++, dir = dirname(dir)) {
    const manifest = join(dir, 'package.json');
    if (existsSync(manifest)) {
      try {
        const pkg = JSON.parse(readFileSync(manifest, 'utf8')) as { name?: unknown; bin?: unknown };
        if (pkg.bin && typeof pkg.bin === 'object') {
          const entries = Object.entries(pkg.bin as Record<string, unknown>);
          const named = entries.find(([, target]) => typeof target === 'string' && resolve(dir, target) === file);
          if (named) return named[0];
          if (GENERIC.test(own) && entries.length === 1) return entries[0]![0];
        }
        if (GENERIC.test(own) && typeof pkg.name === 'string') return pkg.name.replace(/^@[^/]+\//, '');
      } catch {
        // Not readable as JSON: the file's own name.
      }
      break;
    }
    if (dirname(dir) === dir) break;
  }
  return own;
}

/** A process's name for its owner label; null when there is no such process. */
export function agentLabel(pid: number): string | null {
  let comm = readComm(pid);
  if (comm === null) return null;
  const argv = readArgv(pid);
  // Node 22+ names its main thread MainThread, which /proc/PID/comm shows: the program is argv[0]'s.
  if (comm === 'MainThread' && argv[0]) comm = basename(argv[0]);
  if (!INTERPRETERS.test(comm)) return comm;
  // The script: the first word after the interpreter that is not an option (node --no-warnings x.js, python3 -u x.py).
  const script = argv.slice(1).find((arg) => !arg.startsWith('-'));
  if (script === undefined || script === '') return comm;
  return scriptCommand(script);
}
