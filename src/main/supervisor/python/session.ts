// Python interpreter sessions: one long-lived `python3 -X faulthandler` running
// runtime/warden_runtime.py per session, scripts run one at a time in its
// persistent globals (runtime/PROTOCOL.md is the protocol, followed exactly).
//
// Per script: the exec op, then the `result` message on fd 4 and the end
// markers on fd 1 and fd 2. At the limit (or a client's stop) the cancel op
// and SIGINT to the interpreter's pid (never its group), SIGINT again every
// 200 ms until the result comes or the grace ends; then SIGKILL, and the next
// script starts a fresh interpreter.
//
// Where timing can interleave, and what happens (python/*.test.ts and
// marker.test.ts drive rows 1, 2, 4, 5, 6, 7, 8 and 10; rows 3 and 9 are races
// with no deterministic trigger from outside, handled by the order of checks):
//
// | # | what lands when                                          | what happens                                                       |
// |---|----------------------------------------------------------|--------------------------------------------------------------------|
// | 1 | the result arrives before its end markers                | wait (bounded) for both markers; output before them is the script's|
// | 2 | a marker is split across reads                           | held back until whole, stripped (marker.ts)                        |
// | 3 | the result and the deadline cross                        | the stop was asked first: the stop explains the ending              |
// | 4 | the interpreter exits before the result                  | died under the script: judged by its exit code or signal           |
// | 5 | the interpreter exits after the result                   | died between scripts: a note on the next script, fresh interpreter |
// | 6 | a client stop while queued                               | removed from the queue, verdict stopped, it never ran              |
// | 7 | a client stop while the interpreter starts               | stopped before it ran; the interpreter stays for the next script   |
// | 8 | a client stop during the deadline's sequence             | no second sequence; force: SIGKILL now                             |
// | 9 | SIGKILL sent, the result was already on its way          | the result is used; the interpreter is gone all the same           |
// |10 | the interpreter never says ready                         | killed at the bound; the script is spawn-failed with the cause     |

import type { SessionInfo, StopReason } from '../../../shared/result';
import { count, seconds } from '../../../shared/format';
import type { RunCgroup } from '../cgroup';
import { WardenInputError } from '../options';
import { WardenError } from '../errors';
import { readLastPid } from '../procfs';
import { checkSpawnable } from '../spawn';
import type { ProcessSampler } from '../proc-tree/sampler';
import { judge } from '../verdict';
import { describeExit, Interpreter, type Exit } from './interpreter';
import type { PythonRun } from './run';
import type { SessionSettings } from './settings';

/** "Check the traceback..." -> "check the traceback..." */
function lowerFirst(text: string): string {
  return text.length > 0 ? text[0]!.toLowerCase() + text.slice(1) : text;
}

const GONE = 'the variables from earlier scripts are gone';

/** One named session: its interpreter (started lazily, restarted after a death), its queue, one script at a time. */
export class PythonSession {
  private interp?: Interpreter;
  private generation = 0;
  private readonly queue: PythonRun[] = [];
  private current?: PythonRun;
  private scriptsRun = 0;
  private closed = false;
  /** The last interpreter died or was killed: nothing runs until the next script. */
  private dead = false;
  /** Why the next script's interpreter is a fresh one, for its notes. */
  private freshNote?: string;
  /** A between-scripts death being recorded (its output drained first). */
  private deathRecorded?: Promise<void>;
  /** Output the dead interpreter wrote after its last script, for the next script. */
  private orphanOutput?: { stdout: Buffer; stderr: Buffer; dropped: number };
  private closing?: Promise<SessionInfo>;

  constructor(
    readonly name: string,
    private readonly settings: SessionSettings,
  ) {}

  /** The sampler for this session's script trees, when sampling is on. */
  sampler(): ProcessSampler | undefined {
    return this.settings.sampler?.();
  }

  /** Queues a script, or refuses it at once when busy and the request says so. */
  submit(run: PythonRun): void {
    if (this.closed) throw new WardenInputError(`The session "${this.name}" is closing and takes no new scripts.`);
    const busy = this.current !== undefined || this.queue.length > 0;
    if (busy && run.options.onBusy === 'refuse') {
      const waiting = this.queue.length > 0 ? ` and ${this.queue.length} queued` : '';
      throw new WardenError('busy', `The session "${this.name}" is busy with run ${this.current?.id ?? this.queue[0]!.id}${waiting}; the script was refused (onBusy: "refuse").`);
    }
    this.queue.push(run);
    this.renumber();
    this.pump();
    run.announce();
  }

  info(): SessionInfo {
    // An interpreter Warden killed is gone, even before its exit is seen.
    const interp = this.interp?.alive && !this.interp.killedByUs ? this.interp : undefined;
    let state: SessionInfo['state'];
    if (this.closed) state = 'closed';
    else if ((interp && !interp.isReady) || (this.current && !this.current.begun && !this.current.ended)) state = 'starting';
    else if (this.current) state = 'busy';
    else if (!interp && this.dead) state = 'dead';
    else state = 'idle';
    return {
      name: this.name,
      pid: interp?.pid ?? null,
      state,
      scriptsRun: this.scriptsRun,
      queued: this.queue.length,
      running: this.current?.id ?? null,
      pythonVersion: interp?.python ?? null,
      startedAt: interp ? new Date(interp.startedWallMs).toISOString() : null,
    };
  }

  /** A client's stop of one of this session's scripts. */
  stopRun(run: PythonRun, reason: StopReason, force: boolean): void {
    if (run.ended) return;
    const queued = this.queue.indexOf(run);
    if (queued >= 0) {
      this.queue.splice(queued, 1);
      const position = run.queuePosition;
      this.renumber();
      void run.finish({ type: 'not-run', reason, ...(position !== undefined ? { queuePosition: position } : {}) });
      return;
    }
    if (!run.begun) {
      // Its interpreter is still starting: it ends now, without running.
      void run.finish({ type: 'not-run', reason });
      return;
    }
    run.stopper.begin(reason, force);
  }

  /** Kills the interpreter (and with it a running script); the next script starts a fresh one. */
  async restart(): Promise<SessionInfo> {
    const interp = this.interp;
    if (interp?.alive) {
      this.freshNote = `This script ran in a fresh interpreter: the session was restarted, so ${GONE}.`;
      interp.restarted = true;
      if (this.current?.begun && this.current.interp === interp && !this.current.ended) {
        this.current.stopper.begin('user', true);
      } else {
        interp.kill();
      }
      await Promise.race([interp.exited, sleep(this.settings.closeTimeoutMs)]);
    }
    this.dead = false;
    return this.info();
  }

  /** Stops queued scripts, stops the running one with the stop sequence, closes the interpreter. */
  close(reason: StopReason = 'user'): Promise<SessionInfo> {
    this.closing ??= this.doClose(reason);
    return this.closing;
  }

  private async doClose(reason: StopReason): Promise<SessionInfo> {
    this.closed = true;
    for (const run of [...this.queue]) this.stopRun(run, reason, false);
    const running = this.current;
    if (running) {
      this.stopRun(running, reason, false);
      await running.done;
    }
    const interp = this.interp;
    if (interp?.alive) {
      interp.closing = true;
      if (interp.isReady && interp.send({ op: 'close' })) {
        await Promise.race([interp.exited, sleep(this.settings.closeTimeoutMs)]);
      }
      if (interp.alive) {
        interp.kill();
        await Promise.race([interp.exited, sleep(this.settings.closeTimeoutMs)]);
      }
    }
    return this.info();
  }

  private renumber(): void {
    this.queue.forEach((run, i) => (run.queuePosition = i + 1));
  }

  private pump(): void {
    if (this.current !== undefined) return;
    const run = this.queue.shift();
    if (!run) return;
    this.renumber();
    this.current = run;
    run.leaveQueue();
    void this.execute(run)
      .catch(async (error: unknown) => {
        run.addNote(`Warden's session code failed: ${error instanceof Error ? error.message : String(error)}.`);
        await run.finish({ type: 'spawn-failed', cause: 'Warden could not run the script in its session (an internal error).', status: 126 });
      })
      .finally(() => this.release(run));
  }

  /** The script is done with the session (its result is final): the next one may start. */
  release(run: PythonRun): void {
    if (this.current !== run) return;
    this.current = undefined;
    this.pump();
  }

  private startInterpreter(run: PythonRun): Interpreter {
    this.generation += 1;
    const env = { ...run.options.env, WARDEN_SCOPE: `${this.settings.hostId}.session-${this.name}-${this.generation}` };
    let cgroup: RunCgroup | undefined;
    if (run.options.memoryBytes !== null && this.settings.memoryBackend) {
      try {
        cgroup = this.settings.memoryBackend().createRunCgroup(`session-${this.name}-${this.generation}`, run.options.memoryBytes);
      } catch (error) {
        run.addNote(`The interpreter runs without its memory limit: ${error instanceof Error ? error.message : String(error)}`);
      }
    } else if (this.settings.memoryBackend && process.env.WARDEN_CGROUPS !== '0' && checkSpawnable({ argv: [this.settings.pythonCommand], shell: false, cwd: run.options.cwd, env }) === undefined) {
      // (Only for an interpreter that can start: through the wrapper a missing python3 would read as the wrapper's 127.)
      // A cgroup only for teardown: what a script starts cannot leave it, marker or not.
      try {
        cgroup = this.settings.memoryBackend().createRunCgroup(`session-${this.name}-${this.generation}`, null);
      } catch {
        cgroup = undefined; // no writable cgroup here: the marker sweep alone
      }
    }
    const interp = new Interpreter(this.generation, run.options.cwd, env, this.settings, (text) => {
      interp.owner?.addNote(`The Python runtime warned: ${text}`);
    }, cgroup);
    if (cgroup) {
      this.settings.watch?.cgroup(cgroup.path, true);
      // Nothing of the interpreter's cgroup outlives it.
      void interp.exited.then(async () => {
        // Kept for the judgement of the script it died under, which comes after the cgroup is gone.
        interp.countersAtExit = { oomKills: cgroup.readOomKills(), peakBytes: cgroup.readPeakBytes() ?? null };
        await cgroup.killAll().catch(() => undefined);
        await cgroup.remove();
        this.settings.watch?.cgroup(cgroup.path, false);
      });
    }
    void interp.exited.then((exit) => {
      if (interp.underScript !== undefined || interp.killedByUs || interp.closing || !interp.isReady) return;
      // It died between scripts: the next script gets a note and a fresh interpreter.
      this.dead = true;
      this.deathRecorded = this.recordDeathBetween(interp, exit).finally(() => (this.deathRecorded = undefined));
    });
    return interp;
  }

  private async recordDeathBetween(interp: Interpreter, exit: Exit): Promise<void> {
    await Promise.race([interp.outputEnded, sleep(2_000)]);
    const leftover = interp.takeLeftover();
    this.orphanOutput = leftover;
    const said = leftover ? `${leftover.stdout.toString('utf8')}\n${leftover.stderr.toString('utf8')}` : '';
    const judgement = judge({ kind: 'python', exitCode: exit.exitCode, signal: exit.signal, elapsedMs: 0, limitMs: null, outputKept: said, viaShell: false });
    const after = interp.lastRunId ? ` (run ${interp.lastRunId})` : '';
    const advice = judgement.advice ? ` If it happens again, ${lowerFirst(judgement.advice)}` : '';
    const where = leftover && leftover.stderr.length > 0 ? ' What it wrote after that script is at the start of this script\'s output.' : '';
    this.freshNote = `The interpreter died after the previous script${after} had ended: ${describeExit(exit)}.${advice}${where} This script ran in a fresh interpreter, so ${GONE}.`;
  }

  private async execute(run: PythonRun, attempt = 1): Promise<void> {
    // Only when a death is being recorded: otherwise the interpreter starts now, in this call.
    if (this.deathRecorded) await this.deathRecorded;
    let interp = this.interp;
    if (!interp || !interp.alive || interp.killedByUs || interp.startFailed) {
      if (interp && !interp.alive && !interp.killedByUs && !this.freshNote && interp.isReady) {
        // It died between scripts and its exit was not yet recorded.
        await interp.exited;
        await this.deathRecorded;
      }
      interp = this.startInterpreter(run);
      this.interp = interp;
    }
    const ready = await interp.ready;
    if (!ready.ok) {
      this.dead = true;
      await run.finish({ type: 'spawn-failed', cause: ready.cause, status: ready.status });
      return;
    }
    if (run.ended) return; // stopped while the interpreter started
    if (!interp.alive || interp.killedByUs) {
      // It died after ready, before this script was sent: run it in another one, once.
      await this.deathRecorded;
      if (attempt < 2) return this.execute(run, attempt + 1);
      this.dead = true;
      await run.finish({ type: 'spawn-failed', cause: `The Python runtime died twice right after it started (${describeExit(interp.exit!).replace(/^it /, '')}).`, status: 126 });
      return;
    }
    this.dead = false;
    // The first script this interpreter runs.
    const fresh = interp.lastRunId === undefined;
    if (fresh && this.freshNote) {
      run.addNote(this.freshNote);
      this.freshNote = undefined;
    }
    const orphan = fresh ? this.orphanOutput : interp.takeLeftover();
    if (fresh) this.orphanOutput = undefined;
    if (orphan) {
      run.pushOutput('stdout', orphan.stdout);
      run.pushOutput('stderr', orphan.stderr);
      if (!fresh) run.addNote('The interpreter wrote output between the previous script\'s end and this script\'s start (a thread or process an earlier script left running?); it is at the start of this script\'s output.');
      if (orphan.dropped > 0) run.addNote(`${count(orphan.dropped)} bytes written between scripts were dropped.`);
    }
    if (!fresh && ((run.options.cwdGiven && run.options.cwd !== interp.cwd) || run.options.envGiven)) {
      run.addNote(`The session's interpreter was already running (in ${interp.cwd}), so this script's cwd and env were not applied: they take effect when an interpreter starts. Restart the session to apply them.`);
    }
    if (this.settings.procRoot !== null) run.lastPidBefore = readLastPid(this.settings.procRoot);
    const resultP = interp.resultFor(run.id, run.key);
    run.begin(interp, true);
    const first = await Promise.race([
      resultP.then((message) => {
        // When it really ended: earlier than now when this host was stopped meanwhile (run.endedAtMs).
        const seenAtMs = run.elapsedMs();
        const atMs = run.endedAtMs(message.endedNs);
        return { type: 'result' as const, message, atMs, wallMs: Date.now() - (seenAtMs - atMs), seenAtMs };
      }),
      interp.exited.then((exit) => ({ type: 'exit' as const, exit, atMs: run.elapsedMs(), wallMs: Date.now() })),
    ]);
    if (first.type === 'result') {
      interp.underScript = undefined;
      // The limit stays armed until the end markers are in too: the script's output is not over before them.
      const missing = await run.waitMarkers(interp, this.settings.markerWaitMs);
      run.clearDeadline();
      run.stopper.settle();
      interp.forget(run.id);
      interp.owner = interp.owners.stdout = interp.owners.stderr = undefined;
      if (missing.length > 0 && interp.alive) {
        run.addNote(`The end marker on ${missing.join(' and ')} did not arrive within ${seconds(this.settings.markerWaitMs)} of the script's result; later output of this script goes to the next one.`);
      }
      this.scriptsRun += 1;
      let gone: string | undefined;
      if (run.stopper.killed || !interp.alive) {
        // SIGKILL crossed the result, or it died right after: the next script starts fresh.
        this.dead = true;
        if (run.stopper.killed) {
          gone = `The interpreter was killed with SIGKILL as the result came, so ${GONE}; the next script starts a fresh interpreter.`;
          this.freshNote = `This script ran in a fresh interpreter: the previous one was killed (run ${run.id}), so ${GONE}.`;
        }
      }
      await run.finish(first, gone ? { interpreterGone: gone } : {});
      return;
    }
    run.clearDeadline();
    run.stopper.settle();
    interp.forget(run.id);
    // The interpreter died under the script.
    await Promise.race([interp.outputEnded, sleep(run.options.drainMs)]);
    interp.owner = interp.owners.stdout = interp.owners.stderr = undefined;
    this.scriptsRun += 1;
    this.dead = !interp.restarted;
    if (interp.restarted) {
      await run.finish(first, { interpreterGone: `The session was restarted while the script ran: its interpreter was killed, so ${GONE}.` });
      return;
    }
    const { killed, forced } = run.stopper;
    const gone = !killed
      ? `The interpreter died under the script: ${GONE}, and the next script starts a fresh interpreter.`
      : forced
        ? `The stop was forced, so the interpreter was killed with SIGKILL at once: ${GONE}, and the next script starts a fresh interpreter.`
        : `The script did not stop within the ${seconds(run.options.graceMs)} grace after the cancel and SIGINT, so the interpreter was killed with SIGKILL: ${GONE}, and the next script starts a fresh interpreter.`;
    this.freshNote = !killed
      ? `This script ran in a fresh interpreter: the previous one died under run ${run.id} (${describeExit(first.exit).replace(/^it /, '')}), so ${GONE}.`
      : `This script ran in a fresh interpreter: the previous one was killed ${forced ? 'by a forced stop' : 'after the grace'} (run ${run.id}), so ${GONE}.`;
    await run.finish(first, { interpreterGone: gone });
  }
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
