// A shell's word that a command it ran died of a signal: bash's "bash: line
// 1: 10148 Segmentation fault (core dumped)  python3 crash.py" (or a
// script's "run.sh: line 3: ..."), dash's bare "Segmentation fault", zsh's
// "zsh: segmentation fault (core dumped)  ./prog". Only the signals that end a
// process without its say: the crash signals, and SIGKILL ("Killed").

import { tailLines } from './text';

export interface ShellCrash {
  signal: string;
  /** The shell's words for it: "Segmentation fault". */
  description: string;
  /** The process's pid, when the shell names it (bash). */
  pid: number | null;
  /** The command, as the shell shows it, when it does. */
  command: string | null;
  coreDumped: boolean;
  /** 1-based line of stderr that says it. */
  line: number;
}

/** strsignal(3)'s words on Linux, as bash and dash print them. */
const SIGNAL_OF: Record<string, string> = {
  'segmentation fault': 'SIGSEGV',
  aborted: 'SIGABRT',
  'bus error': 'SIGBUS',
  'floating point exception': 'SIGFPE',
  'illegal instruction': 'SIGILL',
  killed: 'SIGKILL',
};
const WORDS = 'Segmentation fault|Aborted|Bus error|Floating point exception|Illegal instruction|Killed';
const BASH = new RegExp(`^(?:[^:]+: )?(?:line \\d+: )?\\s*(\\d+) (${WORDS})(?: \\(core dumped\\))?(?:\\s+(\\S.*))?$`);
const DASH = new RegExp(`^(${WORDS})(?: \\(core dumped\\))?$`);
const ZSH = new RegExp(`^zsh: (${WORDS.toLowerCase()})(?: \\(core dumped\\))?(?:\\s+(\\S.*))?$`);

/** The last line of `stderr` in which a shell says a command it ran died of a crash signal or SIGKILL, or null. */
export function findShellCrash(stderr: string): ShellCrash | null {
  if (stderr === '') return null;
  const { lines, before } = tailLines(stderr);
  for (let i = lines.length - 1; i >= 0; i--) {
    const line = lines[i]!.trimEnd();
    const core = line.includes(' (core dumped)');
    let m = BASH.exec(line);
    if (m) return { signal: SIGNAL_OF[m[2]!.toLowerCase()]!, description: m[2]!, pid: Number(m[1]), command: m[3] ?? null, coreDumped: core, line: before + i + 1 };
    m = DASH.exec(line);
    if (m) return { signal: SIGNAL_OF[m[1]!.toLowerCase()]!, description: m[1]!, pid: null, command: null, coreDumped: core, line: before + i + 1 };
    m = ZSH.exec(line);
    if (m) return { signal: SIGNAL_OF[m[1]!]!, description: m[1]!, pid: null, command: m[2] ?? null, coreDumped: core, line: before + i + 1 };
  }
  return null;
}
