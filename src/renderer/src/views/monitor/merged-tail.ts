// A group's live runs as one tail, as `docker compose logs -f` shows a
// project's services: each line tagged with its run, in the order the page
// got them. Pure: what the page holds of each run's output (its text and
// where it ends in the stream) folded into lines; a line is shown once whole.

/** One line of the merged tail. */
export interface TailLine {
  /** A number that only grows: React's key, and the order the lines came in. */
  seq: number;
  runId: string;
  stream: 'stdout' | 'stderr';
  text: string;
}

/** How far each run's stream has been read (in the stream, and in the text held then), and its unfinished line. */
interface Reading {
  end: number;
  at: number;
  partial: string;
}

export interface TailState {
  lines: TailLine[];
  seq: number;
  read: Record<string, Reading>;
}

export const EMPTY_TAIL: TailState = { lines: [], seq: 0, read: {} };

/** Lines kept: the tail's own bound, whatever the runs print. */
export const TAIL_LINES = 1000;

/** A run's output as the page holds it: each stream's text and where that text ends in the stream (characters, dropped ones counted). */
export interface HeldOutput {
  id: string;
  stdout: string;
  stderr: string;
  stdoutEnd: number;
  stderrEnd: number;
}

/**
 * The tail with what each run printed since it was last read. A run seen for
 * the first time gives its last `seed` lines (what it printed before the tail
 * opened), then everything new. What a page's own cap dropped between two
 * reads is not there to give: the reading goes on from what is held.
 */
export function readInto(state: TailState, held: HeldOutput[], seed = 10, max = TAIL_LINES): TailState {
  let { seq } = state;
  const read = { ...state.read };
  const lines = state.lines.slice();
  let changed = false;
  for (const run of held) {
    for (const stream of ['stdout', 'stderr'] as const) {
      const key = `${run.id}:${stream}`;
      const text = run[stream];
      const end = stream === 'stdout' ? run.stdoutEnd : run.stderrEnd;
      const before = read[key];
      if (before && before.end === end) continue;
      changed = true;
      if (!before) {
        // First sight: the last few whole lines, as a log's tail opens.
        const whole = text.lastIndexOf('\n') + 1;
        const seeded = text.slice(0, whole).split('\n').slice(0, -1).slice(-seed);
        for (const line of seeded) lines.push({ seq: ++seq, runId: run.id, stream, text: line });
        read[key] = { end, at: text.length, partial: text.slice(whole) };
        continue;
      }
      // What came since: the stream's new characters, at the end of the text held; when the page's cap dropped
      // some of them (it keeps the head and the tail), what the text holds past where the reading was.
      const came = end - before.end;
      const from = came <= text.length ? text.length - came : Math.min(before.at, text.length);
      const fresh = `${before.partial}${text.slice(from)}`;
      const parts = fresh.split('\n');
      const partial = parts.pop()!;
      for (const line of parts) lines.push({ seq: ++seq, runId: run.id, stream, text: line });
      read[key] = { end, at: text.length, partial };
    }
  }
  if (!changed) return state;
  return { lines: lines.length > max ? lines.slice(lines.length - max) : lines, seq, read };
}

/** A run's tag in the tail: its program's name and the start of its id ("pytest·3f2a"). */
export function tagOf(run: { id: string; argv?: string[]; code?: string }): string {
  const program = run.argv?.[0]?.split('/').pop() ?? (run.code !== undefined ? 'python' : 'run');
  return `${program}·${run.id.slice(0, 4)}`;
}
