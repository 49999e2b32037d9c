// A few run cgroups made ahead, each with a small shell already inside it
// that execs the next run's command when a run takes it: the cgroup's mkdir
// and, above all, the join (a write to cgroup.procs, which waits for an RCU
// grace period when no other write came just before: 7-15 ms on a busy
// machine, bench/README.md) are off the run's path, and so is the fork. Only
// the host keeps one (SupervisorOptions.cgroupPool): a one-shot embedded run
// would pay for helpers it never uses.
//
// A helper is `/bin/sh -c HELPER warden-cgroup-pool <dir> <script>`, spawned
// detached (its own group and session, as every run) with an empty
// environment, stdin from /dev/null, the run's stdout and stderr pipes, and
// fd 3 a socket to this process. It writes its pid into the cgroup, says "."
// on fd 3 once it is in (only then may a run take it), and waits for "go" on
// fd 3. A run that takes it writes the script (poolScript) to the file named
// <script>, created then (O_EXCL, mode 0600, in $XDG_RUNTIME_DIR, else
// /dev/shm, else the temp dir: memory, where there is one, since it holds the
// run's environment), and sends "go"; the helper sources the file (one
// wake-up: a `$(cat)` costs a fork and two), and the file is unlinked as soon
// as the helper closes fd 3, its first line. The script is made of the run's
// own words, each single-quoted, so nothing in them is ever parsed by the
// shell: cd to the run's directory, the run's environment exactly (the
// shell's own PWD and OLDPWD unset), exec the argv: the same pid, group and
// session the command would have had when spawned directly, born in its
// cgroup. When this process dies, fd 3 closes and an idle helper exits; its
// cgroup, named `<owner>-pool.N`, is swept as any run cgroup of a gone Warden
// is (cgroup-owner.ts). On cgroup v1 a taken cgroup is renamed
// `<owner>-<runId>`, as a run's cgroup is named.
//
// Not pooled, so spawned as before (cgroup.ts: born inside, or the wrapper):
// runs with a memory limit, with stdin, an environment name a shell cannot
// export or treats as its own, a command name that starts with "-", or a
// command found on PATH when the environment has no PATH (the shell's
// default path is not execvp's).

import { randomBytes } from 'node:crypto';
import { accessSync, constants, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, isAbsolute, join } from 'node:path';
import type { Duplex } from 'node:stream';
import { CLI_ERROR_EXIT } from '../../shared/errors';
import { JOIN_FAILED_STATUS, RunCgroup, type MemoryBackend } from './cgroup';
import { effectiveArgv, spawnProcess, type SpawnSpec, type Subprocess } from './spawn';

/** The helper's $0, which `ps` shows while it waits. */
export const POOL_HELPER_NAME = 'warden-cgroup-pool';
/** A pool's size when one is asked for: enough for runs that come back to back (each one refills it after its start). */
export const HOST_CGROUP_POOL = 2;

/**
 * The host's pool size from WARDEN_CGROUP_POOL: off (0) unless set to a whole
 * number from 1 to 8. Off by default: with it on, a burst of 900 clients at a
 * descriptor limit of 256 (host/connection-burst.test.ts) got 1 run and 899
 * refusals, against 185 runs without it; the cause is not found yet.
 */
export function hostPoolSize(env: NodeJS.ProcessEnv = process.env): number {
  const text = env.WARDEN_CGROUP_POOL;
  if (text === undefined || !/^[0-9]$/.test(text)) return 0;
  const size = Number(text);
  return size <= 8 ? size : 0;
}
/** How long no run must start or end before helpers are spawned. */
const FILL_QUIET_MS = 20;
/** A live run younger than this keeps helpers from being spawned (one older is a service, or a long job). */
const YOUNG_RUN_MS = 250;
// $1 is the cgroup, $2 the script's file: sourced only once "go" came (the file is whole by then).
const HELPER = `echo $$ > "$1/cgroup.procs" || exit ${JOIN_FAILED_STATUS}; printf . >&3; read -r go <&3 || exit 0; [ "$go" = go ] || exit 0; . "$2"; exit ${CLI_ERROR_EXIT}`;

/** Names a POSIX shell cannot export, or reads as its own while the script runs. */
const SHELL_OWN = new Set(['IFS', 'OPTIND', 'OPTARG', 'PPID', 'LINENO', 'PS1', 'PS2', 'PS4', 'ENV']);
const EXPORTABLE = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** One word for the shell, taken literally. */
export function quoteWord(word: string): string {
  return `'${word.replaceAll("'", `'\\''`)}'`;
}

/**
 * The script a helper runs for this spawn: the run's directory, its whole
 * environment and its argv, each word quoted; undefined when the spawn must
 * not go through a helper (see the top of this file). Pure.
 */
export function poolScript(spec: SpawnSpec): string | undefined {
  if (spec.stdin !== undefined || spec.stdinPipe || spec.extraPipe) return undefined;
  const argv = effectiveArgv(spec);
  const command = argv[0];
  if (command === undefined || command === '' || command.startsWith('-')) return undefined;
  if (!command.includes('/') && spec.env.PATH === undefined) return undefined;
  const exports: string[] = [];
  for (const [name, value] of Object.entries(spec.env)) {
    if (value === undefined) continue;
    if (!EXPORTABLE.test(name) || SHELL_OWN.has(name)) return undefined;
    exports.push(`export ${name}=${quoteWord(value)}`);
  }
  return ['exec 3<&-', `cd -P -- ${quoteWord(spec.cwd)} || exit 126`, 'unset PWD OLDPWD', ...exports, `exec ${argv.map(quoteWord).join(' ')}`].join('\n');
}

/** $XDG_RUNTIME_DIR (the user's own, in memory), else /dev/shm (memory), else the temp dir. */
export function scriptDirectory(env: Record<string, string | undefined> = process.env): string {
  for (const dir of [env.XDG_RUNTIME_DIR, '/dev/shm']) {
    if (dir === undefined || !isAbsolute(dir)) continue;
    try {
      accessSync(dir, constants.W_OK | constants.X_OK);
      if (statSync(dir).isDirectory()) return dir;
    } catch {
      // not here
    }
  }
  return tmpdir();
}

interface Entry {
  /** The cgroup's directory as made (`<owner>-pool.N`). */
  path: string;
  /** Where the run's script is written when a run takes it (not there before). */
  script: string;
  subprocess: Subprocess;
  control: Duplex;
  /** In its cgroup and waiting for a script. */
  ready: boolean;
  /** Exited (or failed to start) before any run took it. */
  gone: boolean;
  detach: () => void;
}

let made = 0;

export interface PoolStats {
  /** Runs that took a prepared cgroup. */
  taken: number;
  /** Runs the pool could serve but found nothing ready for (they were spawned as before). */
  missed: number;
}

export class CgroupPool {
  private readonly entries: Entry[] = [];
  private closed = false;
  private fillTimer?: NodeJS.Timeout;
  /** When a run last started or ended (fill waits for a quiet moment after it). */
  private busyAtMs = Number.NEGATIVE_INFINITY;
  /** Live runs and when each started. */
  private readonly live = new Map<string, number>();
  readonly stats: PoolStats = { taken: 0, missed: 0 };

  constructor(
    private readonly backend: MemoryBackend,
    /** How many prepared cgroups to keep. */
    private readonly size: number,
    /** Where the helpers start (they cd to the run's directory before the command runs). */
    private readonly cwd = '/',
    /** Where scripts are written for the instant between a take and the helper reading it. */
    private readonly scriptDir = scriptDirectory(),
  ) {}

  /** The prepared cgroups now: each one's directory, its helper's pid, and whether a run may take it. */
  idle(): { path: string; script: string; pid: number; ready: boolean }[] {
    return this.entries.map((e) => ({ path: e.path, script: e.script, pid: e.subprocess.pid!, ready: e.ready && !e.gone }));
  }

  /**
   * Prepares cgroups up to the pool's size once runs leave it a quiet moment:
   * none started or ended for FILL_QUIET_MS and none live younger than
   * YOUNG_RUN_MS. A helper's spawn holds the event loop for a fork, which
   * must not land on a run's path (a short run's whole life is its path).
   * Runs that come back to back meanwhile are spawned as before (warm, so
   * born in their cgroup at little cost).
   */
  fill(): void {
    if (this.closed || this.fillTimer !== undefined) return;
    const fire = () => {
      this.fillTimer = undefined;
      const now = performance.now();
      let waitMs = this.busyAtMs + FILL_QUIET_MS - now;
      for (const startedMs of this.live.values()) waitMs = Math.max(waitMs, startedMs + YOUNG_RUN_MS - now);
      if (waitMs > 0) {
        this.fillTimer = setTimeout(fire, waitMs);
        this.fillTimer.unref();
        return;
      }
      while (!this.closed && this.entries.length < this.size) if (!this.prepare()) break;
    };
    this.fillTimer = setTimeout(fire, FILL_QUIET_MS);
    this.fillTimer.unref();
  }

  /** A run started (pooled or not): no helper is spawned while it is young. */
  runStarted(runId: string): void {
    this.busyAtMs = performance.now();
    this.live.set(runId, this.busyAtMs);
  }

  /** A run ended: its place in the pool is made again once runs pause. */
  runEnded(runId: string): void {
    this.busyAtMs = performance.now();
    this.live.delete(runId);
    this.fill();
  }

  /**
   * A prepared cgroup for this run, with its command already being exec'd in
   * it; undefined when the spawn is not one a helper may run or none is
   * ready (the caller spawns as before). The caller has checked that the
   * command can be spawned (checkSpawnableWrapped), as for any wrapper.
   */
  take(runId: string, spec: SpawnSpec): { cgroup: RunCgroup; subprocess: Subprocess } | undefined {
    if (this.closed) return undefined;
    const script = poolScript(spec);
    if (script === undefined) return undefined;
    const at = this.entries.findIndex((e) => e.ready && !e.gone);
    if (at < 0) {
      this.stats.missed++;
      return undefined;
    }
    const entry = this.entries[at]!;
    try {
      // O_EXCL: a file someone else put at this name is never run, nor written through.
      writeFileSync(entry.script, script, { flag: 'wx', mode: 0o600 });
    } catch {
      void this.discard(entry);
      this.stats.missed++;
      return undefined;
    }
    this.entries.splice(at, 1);
    entry.detach();
    // Before "go": the command reads its cgroup's name as the run's from its first instruction.
    let path = entry.path;
    if (this.backend.version === 1) {
      // Named as any run's cgroup; the rename is one cgroupfs call, and the pool's name still works should it fail.
      const named = join(dirname(path), basename(path).replace(/-pool\.\d+$/, `-${runId}`));
      try {
        renameSync(path, named);
        path = named;
      } catch {
        // kept as made
      }
    }
    const control = entry.control;
    const unlink = () => rmSync(entry.script, { force: true });
    control.on('error', () => undefined);
    // The helper closes its end of fd 3 first thing in the script (read whole by then, or open): the file goes.
    control.once('close', unlink);
    control.on('end', () => control.destroy());
    entry.subprocess.once('exit', unlink);
    control.resume();
    control.end('go\n');
    this.stats.taken++;
    return { cgroup: new RunCgroup(this.backend.version, path, 0, this.backend.mount !== undefined ? { mount: this.backend.mount } : {}), subprocess: entry.subprocess };
  }

  /** Ends every idle helper and removes its cgroup. Never throws. */
  async close(): Promise<void> {
    this.closed = true;
    this.live.clear();
    clearTimeout(this.fillTimer);
    this.fillTimer = undefined;
    await Promise.all([...this.entries].map((entry) => this.discard(entry)));
  }

  /** Ends a helper no run took and removes its cgroup. Never throws. */
  private async discard(entry: Entry): Promise<void> {
    const at = this.entries.indexOf(entry);
    if (at >= 0) this.entries.splice(at, 1);
    entry.detach();
    entry.control.destroy();
    try {
      if (entry.subprocess.pid !== undefined) process.kill(-entry.subprocess.pid, 'SIGKILL');
    } catch {
      // gone already
    }
    const cgroup = new RunCgroup(this.backend.version, entry.path, 0);
    await cgroup.killAll({ budgetMs: 1_000 });
    await cgroup.remove();
  }

  /** One helper in a fresh cgroup; false when none can be made now. */
  private prepare(): boolean {
    let cgroup: RunCgroup;
    try {
      cgroup = this.backend.createRunCgroup(`pool.${++made}`, null);
    } catch {
      return false;
    }
    const script = join(this.scriptDir, `warden-pool-${process.pid}-${randomBytes(8).toString('hex')}`);
    let subprocess: Subprocess;
    try {
      subprocess = spawnProcess('/bin/sh', ['-c', HELPER, POOL_HELPER_NAME, cgroup.path, script], { cwd: this.cwd, env: {}, stdin: 'ignore', extraPipes: 1 });
    } catch {
      void cgroup.remove();
      return false;
    }
    const control = subprocess.stdio[3] as Duplex | undefined;
    if (subprocess.pid === undefined || control === undefined) {
      subprocess.once('error', () => undefined);
      void cgroup.remove();
      return false;
    }
    const entry: Entry = { path: cgroup.path, script, subprocess, control, ready: false, gone: false, detach: () => undefined };
    const onData = () => (entry.ready = true);
    const onGone = () => {
      entry.gone = true;
      const at = this.entries.indexOf(entry);
      if (at >= 0) this.entries.splice(at, 1);
      entry.detach();
      control.destroy();
      void cgroup.remove();
    };
    const onError = () => undefined;
    control.on('data', onData);
    control.on('error', onError);
    subprocess.once('exit', onGone);
    // Nothing is read from its output before a run takes it; the run attaches its own readers.
    entry.detach = () => {
      control.off('data', onData);
      control.off('error', onError);
      subprocess.off('exit', onGone);
    };
    this.entries.push(entry);
    return true;
  }
}
