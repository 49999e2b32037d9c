// A group's live runs as one following tail, each line tagged with its run
// (merged-tail.ts). The runs' output as the page holds it, read at most a few
// times a second (as the log view is); a run whose output the page does not
// hold yet (live before the page opened) is fetched once.

import { useEffect, useLayoutEffect, useMemo, useRef, useState } from 'react';
import { useWarden } from '../../store';
import { streamLength } from '../../../../shared/stream-length';
import { FOLLOW_MS } from '../run/shown-output';
import { navigate } from '../../router';
import type { RunGroup } from './model';
import { EMPTY_TAIL, readInto, tagOf, type HeldOutput, type TailState } from './merged-tail';

/** Lines drawn: the newest of what the tail keeps. */
const SHOWN_LINES = 400;
const TAG_COLOURS = 8;

export function MergedTail({ group }: { group: RunGroup }) {
  const load = useWarden((s) => s.load);
  const liveIds = useMemo(() => group.runs.filter((r) => r.state !== 'ended').map((r) => r.id), [group.runs]);
  const colourOf = useMemo(() => new Map(group.runs.map((r, i) => [r.id, i % TAG_COLOURS])), [group.runs]);
  const tags = useMemo(() => new Map(group.runs.map((r) => [r.id, tagOf(r)])), [group.runs]);
  const [tail, setTail] = useState<TailState>(EMPTY_TAIL);
  const ids = useRef(group.runs.map((r) => r.id));
  ids.current = group.runs.map((r) => r.id);

  // The live runs' output: fetched once where the page holds none, merged by offset as the store does.
  useEffect(() => {
    const { output } = useWarden.getState();
    for (const id of liveIds) if (output[id] === undefined) void load(id);
  }, [liveIds.join(','), load]);

  useEffect(() => {
    setTail(EMPTY_TAIL);
    let timer: ReturnType<typeof setTimeout> | undefined;
    const read = () => {
      timer = undefined;
      const { output, runs, partial } = useWarden.getState();
      setTail((t) => {
        const held: HeldOutput[] = [];
        for (const id of ids.current) {
          const o = output[id];
          if (o) held.push({ id, stdout: o.stdout, stderr: o.stderr, stdoutEnd: o.stdoutEnd, stderrEnd: o.stderrEnd });
          else {
            // A run the tail was reading that ended: its last lines from its whole result, once (not one never read).
            const run = runs[id];
            if (run && !partial[id] && (t.read[`${id}:stdout`] || t.read[`${id}:stderr`])) held.push({ id, stdout: run.stdout, stderr: run.stderr, stdoutEnd: streamLength(run.stdout, run.stdoutTruncated), stderrEnd: streamLength(run.stderr, run.stderrTruncated) });
          }
        }
        return readInto(t, held);
      });
    };
    read();
    const unsubscribe = useWarden.subscribe((state, before) => {
      if ((state.output === before.output && state.runs === before.runs) || timer !== undefined) return;
      timer = setTimeout(read, FOLLOW_MS);
    });
    return () => {
      unsubscribe();
      clearTimeout(timer);
    };
  }, [group.key]);

  const box = useRef<HTMLDivElement>(null);
  const [follow, setFollow] = useState(true);
  useLayoutEffect(() => {
    const el = box.current;
    if (el && follow) el.scrollTop = el.scrollHeight;
  }, [tail, follow]);
  const shown = tail.lines.length > SHOWN_LINES ? tail.lines.slice(tail.lines.length - SHOWN_LINES) : tail.lines;

  return (
    <div className="mon-tail" data-testid="merged-tail" data-runs={liveIds.length}>
      <div className="mon-tail-head">
        <strong>{group.label}</strong>
        <span className="muted">
          {liveIds.length === 0 ? 'no live run: the tail follows the next one this group starts' : `${liveIds.length} live run${liveIds.length === 1 ? '' : 's'}, merged as their lines come`}
        </span>
      </div>
      <div
        ref={box}
        className="mon-tail-lines"
        onScroll={(e) => {
          const el = e.currentTarget;
          setFollow(el.scrollTop + el.clientHeight >= el.scrollHeight - 8);
        }}
      >
        {shown.length === 0 && <p className="muted mon-hint">No output yet.</p>}
        {shown.map((line) => (
          <div key={line.seq} className={`mon-tail-line${line.stream === 'stderr' ? ' stderr' : ''}`} data-testid="merged-tail-line" data-run-id={line.runId} data-stream={line.stream}>
            <a
              className={`mon-tag tag-${colourOf.get(line.runId) ?? 0}`}
              href={`#/runs/${line.runId}`}
              onClick={(e) => {
                e.preventDefault();
                navigate({ view: 'run', id: line.runId, tab: 'output' });
              }}
            >
              {tags.get(line.runId) ?? line.runId.slice(0, 4)}
            </a>
            <span className="mon-tail-text">{line.text === '' ? ' ' : line.text}</span>
          </div>
        ))}
      </div>
    </div>
  );
}
