// Whether a crash left a core dump, and where the kernel's core_pattern sends
// it (core(5)). Node's exit event does not carry the wait status's core flag,
// so the evidence is the file itself: a pattern that names a file is resolved
// for the crashed process and looked for; a pattern that pipes the dump to a
// program (systemd-coredump, apport) names that program, which keeps it.

import { readFileSync, readdirSync, statSync } from 'node:fs';
import { hostname } from 'node:os';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import type { CoreReport, Culprit } from '../../shared/result';
import type { ShellCrash } from '../../shared/crash/shell';
import { isCrashSignal } from './advice';
import { signalName, signalNumber } from './signals';

export interface CrashedProcess {
  /** Its pid, when known (the main process); a child a shell ran is matched by any pid. */
  pid?: number;
  /** The signal's number (%s). */
  signalNumber: number;
  /** Its working directory, where a relative pattern puts the file (the run's). */
  cwd: string;
  /** When the run started (ms since the epoch): an older file is not this crash's. */
  startedWallMs: number;
}

export interface CoreSettings {
  /** /proc/sys/kernel/core_pattern, as read. */
  pattern: string;
  /** /proc/sys/kernel/core_uses_pid: ".PID" is added to a pattern without %p. */
  usesPid: boolean;
  /** The soft core file size limit in bytes (RLIMIT_CORE); null: unlimited. */
  limitBytes: number | null;
  /** The hard one, which a run started with --core gets as its soft limit; null: unlimited. */
  hardLimitBytes: number | null;
}

export type ResolvedPattern =
  | { kind: 'pipe'; program: string }
  /** `shown`: the path with what could not be filled in left as the pattern wrote it. */
  | { kind: 'file'; dir: string; name: RegExp; shown: string }
  | { kind: 'unknown' };

/** How far behind the wall clock a file's modification time can be. */
const COARSE_CLOCK_MS = 20;

const escape = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * The file a core_pattern names for one crashed process: its directory and a
 * pattern for its name (a specifier this side cannot know, such as %t, matches
 * anything of its kind). A directory made of unknown specifiers is 'unknown'.
 */
export function resolveCorePattern(settings: Pick<CoreSettings, 'pattern' | 'usesPid'>, p: Omit<CrashedProcess, 'startedWallMs'>, host = hostname()): ResolvedPattern {
  const pattern = settings.pattern.trim();
  if (pattern.startsWith('|')) return { kind: 'pipe', program: pattern.slice(1).trim().split(/\s+/)[0] ?? '' };
  if (pattern === '') return { kind: 'unknown' };
  const withPid = settings.usesPid && !pattern.includes('%p') ? `${pattern}.%p` : pattern;
  const pid = p.pid !== undefined ? String(p.pid) : undefined;
  const known: Record<string, string | undefined> = {
    '%': '%',
    p: pid,
    P: pid,
    i: pid,
    I: pid,
    s: String(p.signalNumber),
    h: host,
    u: typeof process.getuid === 'function' ? String(process.getuid()) : undefined,
    g: typeof process.getgid === 'function' ? String(process.getgid()) : undefined,
  };
  const anything: Record<string, string> = { p: '\\d+', P: '\\d+', i: '\\d+', I: '\\d+', t: '\\d+', c: '\\d+', d: '\\d+', s: '\\d+', u: '\\d+', g: '\\d+' };
  const absolute = isAbsolute(withPid) ? withPid : join(p.cwd, withPid);
  const dir = dirname(absolute);
  const base = absolute.slice(dir.length + 1);
  // Specifiers in a directory are filled in when known; one that is not leaves nowhere to look.
  for (const m of dir.matchAll(/%(.)/g)) if (known[m[1]!] === undefined) return { kind: 'unknown' };
  const dirFilled = resolve(dir.replace(/%(.)/g, (_, c: string) => known[c]!));
  let source = '';
  let shown = '';
  for (let i = 0; i < base.length; i++) {
    const ch = base[i]!;
    if (ch === '%' && i + 1 < base.length) {
      const c = base[++i]!;
      const value = known[c];
      source += value !== undefined ? escape(value) : (anything[c] ?? '.*');
      shown += value ?? `%${c}`;
    } else {
      source += escape(ch);
      shown += ch;
    }
  }
  return { kind: 'file', dir: dirFilled, name: new RegExp(`^${source}$`), shown: join(dirFilled, shown) };
}

/** The kernel's settings and this process's soft core limit, which the runs it starts inherit. */
export function readCoreSettings(procRoot = '/proc'): CoreSettings | null {
  try {
    const pattern = readFileSync(join(procRoot, 'sys/kernel/core_pattern'), 'utf8').replace(/\n$/, '');
    let usesPid = false;
    try {
      usesPid = readFileSync(join(procRoot, 'sys/kernel/core_uses_pid'), 'utf8').trim() === '1';
    } catch {
      // Absent: the kernel adds no pid.
    }
    const limits = readFileSync(join(procRoot, 'self/limits'), 'utf8');
    const m = /^Max core file size\s+(\S+)\s+(\S+)/m.exec(limits);
    const bytesOf = (text: string | undefined) => (text === undefined || text === 'unlimited' ? null : Number(text));
    return { pattern, usesPid, limitBytes: bytesOf(m?.[1]), hardLimitBytes: bytesOf(m?.[2]) };
  } catch {
    return null;
  }
}

/** What became of the crash's core dump, from the settings and the file system. */
export function inspectCore(settings: CoreSettings, p: CrashedProcess): CoreReport {
  const base = { pattern: settings.pattern, limitBytes: settings.limitBytes };
  const resolved = resolveCorePattern(settings, p);
  if (resolved.kind === 'pipe') {
    // The program decides (and may honour the limit itself): only it can say whether it kept one.
    return { dumped: null, ...base, where: resolved.program };
  }
  if (resolved.kind === 'unknown') return { dumped: null, ...base };
  let newest: { path: string; mtimeMs: number } | undefined;
  try {
    for (const name of readdirSync(resolved.dir)) {
      if (!resolved.name.test(name)) continue;
      const path = join(resolved.dir, name);
      const st = statSync(path, { throwIfNoEntry: false });
      // File times come from the kernel's coarse clock (a tick, at most 10 ms, behind); an older file is an earlier crash's.
      if (st?.isFile() && st.mtimeMs >= p.startedWallMs - COARSE_CLOCK_MS && (!newest || st.mtimeMs > newest.mtimeMs)) newest = { path, mtimeMs: st.mtimeMs };
    }
  } catch {
    // A directory that cannot be read holds nothing this side can show.
    return { dumped: null, ...base, where: resolved.shown };
  }
  return newest ? { dumped: true, ...base, where: newest.path } : { dumped: false, ...base, where: resolved.shown };
}

/**
 * The crash a core report is for, from how the run ended: the main process's
 * crash signal (its pid known), a shell's report in stderr of a command it
 * ran that crashed (its pid, when the shell names it), or a shell's 128 + n
 * for one (a child of unknown pid). Null for any other ending.
 */
export function crashOf(verdict: string, exitCode: number | null, signal: string | null, mainPid: number | undefined, shellCrash?: { pid: number | null; signal: string } | null): { pid?: number; signalNumber: number } | null {
  if (verdict === 'crashed' && signal !== null && isCrashSignal(signal)) {
    const n = signalNumber(signal);
    return n === undefined ? null : { ...(mainPid !== undefined ? { pid: mainPid } : {}), signalNumber: n };
  }
  // The shell said which command crashed (bash names its pid), whatever status the shell went on to exit with.
  if (verdict === 'failed' && shellCrash && isCrashSignal(shellCrash.signal)) {
    const n = signalNumber(shellCrash.signal);
    if (n !== undefined) return { ...(shellCrash.pid !== null ? { pid: shellCrash.pid } : {}), signalNumber: n };
  }
  if (verdict === 'failed' && exitCode !== null && exitCode > 128) {
    const name = signalName(exitCode - 128);
    if (name !== undefined && isCrashSignal(name)) return { signalNumber: exitCode - 128 };
  }
  return null;
}

/**
 * The process a crash or a SIGKILL Warden did not send ended: the main
 * process, named as its last sample saw it (else by its command), or the
 * command a shell said died. Null for any other ending.
 */
export function culpritOf(verdict: string, signal: string | null, mainPid: number | undefined, lastRoot: { pid: number; command: string } | undefined, argv: string[], shellCrash: ShellCrash | null): Culprit | null {
  if ((verdict === 'crashed' || verdict === 'killed' || verdict === 'signaled') && signal !== null) {
    const pid = lastRoot?.pid ?? mainPid ?? null;
    return { pid, command: lastRoot?.command ?? argv.join(' '), signal, source: 'exit' };
  }
  if (verdict === 'failed' && shellCrash) return { pid: shellCrash.pid, command: shellCrash.command, signal: shellCrash.signal, source: 'shell', stderrLine: shellCrash.line };
  return null;
}
