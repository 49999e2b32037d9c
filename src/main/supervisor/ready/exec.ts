// exec:CMD: ready when the command exits 0. It runs through /bin/sh -c (the
// probe is a command line the user wrote), in the run's directory and
// environment, in a process group of its own that is killed whole when an
// attempt runs past its bound (default 5 s).

import { spawnProcess } from '../spawn';
import { failed, passed, type Attempt } from './attempt';

/** The bound on one exec attempt. */
export const EXEC_ATTEMPT_MS = 5_000;

export function probeExec(command: string, where: { cwd: string; env: Record<string, string | undefined> }, timeoutMs = EXEC_ATTEMPT_MS): Promise<Attempt> {
  return new Promise((resolve) => {
    let child: ReturnType<typeof spawnProcess>;
    try {
      child = spawnProcess('/bin/sh', ['-c', command], { cwd: where.cwd, env: where.env, stdin: 'ignore', extraPipes: 0 });
    } catch (error) {
      resolve(failed(`could not start: ${error instanceof Error ? error.message : String(error)}`));
      return;
    }
    let tail = '';
    const keep = (chunk: Buffer) => (tail = (tail + chunk.toString('utf8')).slice(-200));
    child.stdout?.on('data', keep);
    child.stderr?.on('data', keep);
    const timer = setTimeout(() => {
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        // gone already
      }
    }, timeoutMs);
    let timedOut = false;
    timer.unref();
    child.once('error', (error: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      resolve(failed(`could not start: ${error.code ?? error.message}`));
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      timedOut = signal === 'SIGKILL';
      const said = tail.trim().split('\n').pop()?.trim();
      if (code === 0) resolve(passed());
      else if (timedOut) resolve(failed(`still running after ${timeoutMs} ms (killed)`));
      else resolve(failed(`exited ${code ?? signal}${said ? `: ${said.slice(0, 120)}` : ''}`));
    });
  });
}
