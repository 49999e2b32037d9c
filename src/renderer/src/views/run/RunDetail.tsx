// One run: header with its actions, then tabs (#/runs/ID/TAB): the summary
// (an ended run that did not complete opens on it), the output, the script (a
// Python run), the process tree, the verdict and the timeline. A link without
// a tab (#/runs/ID) opens the one that fits the run (summary.ts).

import { useEffect, useRef, useState } from 'react';
import type { RunResult } from '../../../../shared/result';
import { Header } from './Header';
import { OutputView } from './OutputView';
import { TimelineView } from './TimelineView';
import { TreeView } from './TreeView';
import { VerdictView } from './VerdictView';
import type { LiveExtension } from './describe';
import './run.css';
import { hrefOf, navigate, type LineRange, type Tab } from '../../router';
import { ScriptView } from './ScriptView';
import { defaultTab, tabsOf } from './summary';
import { SummaryView } from './SummaryView';
import { useTitle } from '../../components/hooks';
import { commandLine, statusOf } from '../../format';
import { liveElapsed, useWarden } from '../../store';

const TAB_LABEL: Record<Tab, string> = { summary: 'Summary', output: 'Output', script: 'Script', tree: 'Process tree', verdict: 'Verdict', timeline: 'Timeline' };

/**
 * `onTab`: the detail is a pane of another view (the monitor), which keeps
 * the tab across runs: a tab chosen is told to it, not routed to; the page's
 * title is that view's.
 */
export function RunDetail({ id, tab: asked, lines, onTab }: { id: string; tab: Tab | null; lines?: LineRange; onTab?: (tab: Tab) => void }) {
  const run = useWarden((s) => s.runs[id]);
  const api = useWarden((s) => s.api);
  const load = useWarden((s) => s.load);
  const tree = useWarden((s) => s.trees[id]);
  const [missing, setMissing] = useState(false);

  // A run not in the store (opened from History, or a link), or held without its output (listed), is
  // fetched once; so is a live run whose stream the page does not hold yet (its chunks are merged by offset).
  const partial = useWarden((s) => s.partial[id] === true);
  const streaming = useWarden((s) => s.output[id] !== undefined);
  const present = run !== undefined && !partial && (run.state === 'ended' || streaming);
  useEffect(() => {
    if (present || !api) return;
    let current = true;
    setMissing(false);
    // A link to a line far down: the page holding it comes with the first ones.
    void load(id, lines ? { line: { stream: lines.stream, line: lines.from } } : undefined).then((found) => {
      if (current && !found) setMissing(true);
    });
    return () => {
      current = false;
    };
  }, [id, present, api, load]);

  const extensions = useLiveExtensions(run);
  const shown = useRef<{ id: string; tab: Tab } | null>(null);
  const endedHere = useEndedWhileShown(id, run);
  useTitle(onTab ? null : run ? `${statusOf(run)} · ${shorten(commandLine(run) || '(empty script)', 60)} — Warden` : `Run ${id} — Warden`);
  const go = (t: Tab) => (onTab ? onTab(t) : navigate({ view: 'run', id, tab: t }));

  if (!run) {
    return (
      <section className="rd" data-testid="run-detail" data-state="" data-verdict="">
        <div className="empty">{missing ? <p>No run {id} is known to this host or its history.</p> : <p>Loading run {id}…</p>}</div>
      </section>
    );
  }

  const tabs = tabsOf(run);
  // A tab the run does not have (a summary of a run that completed, a script of a command) falls back too.
  // A link without a tab keeps the tab the page first showed for it: a live run that ends stays where the reader is.
  // Kept only for a run read live: one whose end came a moment after it was shown opens as an ended run does.
  const keep = run.state !== 'ended' || endedHere;
  const kept = keep && shown.current?.id === id && tabs.includes(shown.current.tab) ? shown.current.tab : null;
  const tab = asked !== null && tabs.includes(asked) ? asked : (kept ?? defaultTab(run));
  shown.current = { id, tab };
  // Ended while shown, badly: the Summary is offered, not forced; not to someone who stopped it (it ended as asked).
  const offerSummary = endedHere && tabs.includes('summary') && tab !== 'summary' && run.stop?.reason !== 'user';
  return (
    <section className="rd" data-testid="run-detail" data-state={run.state} data-verdict={run.verdict ?? ''} data-tab={tab}>
      {/* Keyed by run: another run opened in the same view starts with fresh inputs and notices. */}
      <Header key={run.id} run={run} />
      <nav className="rd-tabs" role="tablist" aria-label="Run detail">
        {tabs.map((t) => (
          <a
            key={t}
            role="tab"
            href={hrefOf({ view: 'run', id, tab: t })}
            aria-selected={t === tab}
            className={t === tab ? 'on' : undefined}
            data-testid={`tab-${t}`}
            onClick={(e) => {
              e.preventDefault();
              go(t);
            }}
          >
            {TAB_LABEL[t]}
            {t === 'tree' && <TreeCount id={id} />}
          </a>
        ))}
        {/* In the tabs' row, at its end: the log below does not move when it appears. */}
        {offerSummary && (
          <span className="rd-offer" data-testid="summary-offer" role="status">
            Ended: {statusOf(run)}.{' '}
            <a
              href={hrefOf({ view: 'run', id, tab: 'summary' })}
              onClick={(e) => {
                e.preventDefault();
                go('summary');
              }}
            >
              See its summary
            </a>
          </span>
        )}
      </nav>
      <div className="rd-panel" role="tabpanel">
        {tab === 'summary' && <SummaryView run={run} />}
        {tab === 'output' && <OutputView key={id} run={run} {...(lines ? { lines } : {})} />}
        {tab === 'script' && <ScriptView run={run} />}
        {tab === 'tree' && <TreeView run={run} tree={tree} />}
        {tab === 'verdict' && <VerdictView run={run} />}
        {tab === 'timeline' && <TimelineView run={run} extensions={extensions} />}
      </div>
    </section>
  );
}

/** A run shown live for less than this before its end was not being read: it opens as an ended run does. */
const READ_LIVE_MS = 1000;

/**
 * Whether this run ended while the page showed it live, for long enough that
 * someone may have been reading it (not one opened already ended, nor one
 * whose end the page learnt a moment after showing it live).
 */
function useEndedWhileShown(id: string, run: RunResult | undefined): boolean {
  const seen = useRef<{ id: string; liveAt: number; endedAt: number | null } | null>(null);
  if (run && run.id === id) {
    if (seen.current?.id !== id) seen.current = run.state !== 'ended' ? { id, liveAt: performance.now(), endedAt: null } : null;
    else if (run.state === 'ended' && seen.current.endedAt === null) seen.current.endedAt = performance.now();
  }
  const s = seen.current;
  return run !== undefined && run.state === 'ended' && s !== null && s.id === id && s.endedAt !== null && s.endedAt - s.liveAt >= READ_LIVE_MS;
}

function shorten(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

function TreeCount({ id }: { id: string }) {
  const processes = useWarden((s) => (s.runs[id]?.state === 'ended' ? undefined : s.trees[id]?.processes));
  if (processes === undefined) return null;
  return <span className="rd-tab-count">{processes}</span>;
}

/** Limit extensions the page saw while the run was live (the history has them only once written). */
function useLiveExtensions(run: RunResult | undefined): LiveExtension[] {
  const syncedAt = useWarden((s) => (run ? s.syncedAt[run.id] : undefined));
  const [extensions, setExtensions] = useState<LiveExtension[]>([]);
  const last = useRef<{ id: string; limitMs: number | null } | null>(null);
  const id = run?.id;
  const limitMs = run?.limitMs ?? null;
  const live = run !== undefined && run.state !== 'ended';
  useEffect(() => {
    if (id === undefined) return;
    const before = last.current;
    last.current = { id, limitMs };
    if (!before || before.id !== id) {
      setExtensions([]);
      return;
    }
    if (live && limitMs !== null && (before.limitMs === null || limitMs > before.limitMs)) {
      const atMs = run ? liveElapsed(run, syncedAt) : 0;
      const byMs = before.limitMs === null ? limitMs - atMs : limitMs - before.limitMs;
      setExtensions((list) => [...list, { limitMs, byMs, atMs }]);
    }
    // Only a change of the limit is an extension; the run object changes with every chunk of output.
  }, [id, limitMs]);
  return extensions;
}
