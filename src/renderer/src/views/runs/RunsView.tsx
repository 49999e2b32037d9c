// Live runs: one row per run the page knows, newest first, each with its
// elapsed time against the limit and where its stop sequence stands. Rows are
// links to the run's detail; ArrowUp/ArrowDown move the selection, Enter opens.

import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import type { RunResult, Verdict } from '../../../../shared/result';
import { bytes, clock, commandLine, duration, statusOf } from '../../format';
import { hrefOf, navigate } from '../../router';
import { liveElapsed, useWarden } from '../../store';
import { graceFrom, knownGrace } from '../../components/grace';
import { useNow } from '../../components/hooks';
import { runPhase, stopSignals, type PhaseView } from './phase';
import './runs.css';

type StateFilter = 'all' | 'live' | 'ended';
const VERDICTS: Verdict[] = ['completed', 'failed', 'timed-out', 'stopped', 'killed', 'crashed', 'signaled', 'lost', 'spawn-failed'];

function isLive(run: RunResult): boolean {
  return run.state !== 'ended';
}

function isTyping(target: EventTarget | null): boolean {
  return target instanceof HTMLElement && (target.isContentEditable || ['INPUT', 'SELECT', 'TEXTAREA', 'BUTTON'].includes(target.tagName));
}

export function RunsView() {
  const runs = useWarden((s) => s.runs);
  const order = useWarden((s) => s.order);
  const [stateFilter, setStateFilter] = useState<StateFilter>('all');
  const [verdictFilter, setVerdictFilter] = useState<Verdict | ''>('');
  const [selected, setSelected] = useState<string | null>(null);
  const rowRefs = useRef(new Map<string, HTMLAnchorElement>());

  const all = useMemo(() => order.map((id) => runs[id]).filter((run): run is RunResult => run !== undefined), [order, runs]);
  const visible = useMemo(
    () =>
      all.filter((run) => {
        if (stateFilter === 'live' && !isLive(run)) return false;
        if (stateFilter === 'ended' && isLive(run)) return false;
        return verdictFilter === '' || run.verdict === verdictFilter;
      }),
    [all, stateFilter, verdictFilter],
  );
  const liveCount = all.filter(isLive).length;
  const now = useNow(liveCount > 0 ? 250 : null);

  const select = useCallback((id: string) => {
    setSelected(id);
    const row = rowRefs.current.get(id);
    row?.focus({ preventScroll: true });
    row?.scrollIntoView({ block: 'nearest' });
  }, []);

  useEffect(() => {
    const onKey = (event: KeyboardEvent) => {
      if (event.altKey || event.ctrlKey || event.metaKey || event.shiftKey) return;
      const onRow = event.target instanceof HTMLElement && event.target.dataset.testid === 'run-row';
      if (!onRow && isTyping(event.target)) return;
      if (event.key === 'ArrowDown' || event.key === 'ArrowUp') {
        if (visible.length === 0) return;
        event.preventDefault();
        const at = visible.findIndex((run) => run.id === selected);
        const next = at < 0 ? (event.key === 'ArrowDown' ? 0 : visible.length - 1) : Math.min(visible.length - 1, Math.max(0, at + (event.key === 'ArrowDown' ? 1 : -1)));
        select(visible[next]!.id);
      } else if (event.key === 'Enter' && selected && visible.some((run) => run.id === selected)) {
        event.preventDefault();
        navigate({ view: 'run', id: selected, tab: null });
      }
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [visible, selected, select]);

  if (all.length === 0) return <RunsEmpty />;

  const filtered = stateFilter !== 'all' || verdictFilter !== '';
  return (
    <section className="view runs">
      <header className="runs-head">
        <div className="runs-title">
          <h1>Runs</h1>
          <span className="muted" data-testid="runs-count">
            {liveCount} live · {all.length - liveCount} ended
          </span>
        </div>
        <div className="runs-filters">
          <label>
            <span>State</span>
            <select data-testid="filter-state" value={stateFilter} onChange={(e) => setStateFilter(e.target.value as StateFilter)}>
              <option value="all">All</option>
              <option value="live">Live</option>
              <option value="ended">Ended</option>
            </select>
          </label>
          <label>
            <span>Verdict</span>
            <select data-testid="filter-verdict" value={verdictFilter} onChange={(e) => setVerdictFilter(e.target.value as Verdict | '')}>
              <option value="">Any</option>
              {VERDICTS.map((v) => (
                <option key={v} value={v}>
                  {v}
                </option>
              ))}
            </select>
          </label>
          <button type="button" className="primary" onClick={() => navigate({ view: 'new' })}>
            New run
          </button>
        </div>
      </header>

      <div className="runs-table" aria-label="Runs">
        <div className="runs-row runs-columns" aria-hidden="true">
          <span>Status</span>
          <span>Command</span>
          <span>Elapsed / limit</span>
          <span className="runs-num">Peak memory</span>
        </div>
        {visible.length === 0 ? (
          <div className="runs-none" data-testid="runs-none-match">
            <span>No runs match these filters.</span>
            <button
              type="button"
              onClick={() => {
                setStateFilter('all');
                setVerdictFilter('');
              }}
            >
              Show all runs
            </button>
          </div>
        ) : (
          visible.map((run) => (
            <RunRow
              key={run.id}
              run={run}
              now={now}
              selected={run.id === selected}
              onFocus={() => setSelected(run.id)}
              rowRef={(el) => {
                if (el) rowRefs.current.set(run.id, el);
                else rowRefs.current.delete(run.id);
              }}
            />
          ))
        )}
      </div>
      {filtered && visible.length > 0 && (
        <p className="runs-foot muted">
          {visible.length} of {all.length} runs shown
        </p>
      )}
      <p className="runs-foot muted">
        <kbd>↑</kbd> <kbd>↓</kbd> select · <kbd>Enter</kbd> open
      </p>
    </section>
  );
}

function RunRow({ run, now, selected, onFocus, rowRef }: { run: RunResult; now: number; selected: boolean; onFocus: () => void; rowRef: (el: HTMLAnchorElement | null) => void }) {
  const syncedAt = useWarden((s) => s.syncedAt[run.id]);
  const tree = useWarden((s) => s.trees[run.id]);
  const streamed = useWarden((s) => s.signals[run.id]);
  const progress = useWarden((s) => s.stopProgress[run.id]);

  const signals = stopSignals(run.stop?.signals, streamed);
  // The engine says when SIGKILL is due; else the grace this page started the run with; else the default (estimated).
  const grace = graceFrom(progress?.killAtMs, signals) ?? knownGrace(run.id);
  // A signal's atMs is an exact reading of the run's clock: the estimate between events never lags behind it.
  const elapsed = run.state === 'ended' ? run.elapsedMs : Math.max(liveElapsed(run, syncedAt, now), signals.at(-1)?.atMs ?? 0);
  const view = runPhase({
    kind: run.kind,
    state: run.state,
    ...(run.verdict ? { verdict: run.verdict } : {}),
    ...(run.queuePosition !== undefined ? { queuePosition: run.queuePosition } : {}),
    elapsedMs: elapsed,
    limitMs: run.limitMs,
    signals,
    ...(progress ? { step: progress.step } : {}),
    ...(grace !== undefined ? { graceMs: grace } : {}),
  });
  const line = commandLine(run) || (run.kind === 'python' ? '(empty script)' : '');
  const status = statusOf(run);
  const live = run.state !== 'ended';
  const peak = run.peak?.rssBytes ?? tree?.peak.rssBytes ?? tree?.rssBytes;
  const processes = live ? tree?.processes : run.peak?.processes;

  return (
    <a
      ref={rowRef}
      href={hrefOf({ view: 'run', id: run.id, tab: null })}
      className={`runs-row run-row${selected ? ' selected' : ''}`}
      aria-current={selected ? 'true' : undefined}
      data-testid="run-row"
      data-run-id={run.id}
      data-state={run.state}
      data-verdict={run.verdict ?? ''}
      onFocus={onFocus}
    >
      <span className="runs-status">
        <span className={`badge ${status}`} data-testid="run-badge">
          {status}
        </span>
      </span>
      <span className="runs-command">
        <code className="runs-line" title={run.kind === 'python' ? run.code : line}>
          {line}
        </code>
        <span className="runs-meta">
          {run.kind === 'python' ? (
            <>
              <span className="runs-kind">python</span>
              <span data-testid="run-session">session {run.session ?? 'default'}</span>
            </>
          ) : (
            <span className="runs-kind">command</span>
          )}
          <span>{clock(run.startedAt)}</span>
          <span className="runs-id">{run.id.slice(0, 8)}</span>
        </span>
      </span>
      <span className="runs-time">
        <RunBar run={run} view={view} live={live} />
        <span className="runs-time-text">
          <span className="runs-elapsed">
            {duration(elapsed)}
            {run.limitMs !== null && <span className="muted"> / {duration(run.limitMs)}</span>}
          </span>
          <span className={`runs-phase phase-${view.phase}`} data-testid="run-phase" title={view.estimated ? 'Time to SIGKILL estimated from the default grace (a run does not report its own)' : undefined}>
            {view.label}
          </span>
        </span>
      </span>
      <span className="runs-num runs-memory">
        <span>{bytes(peak)}</span>
        <span className="muted">{processes !== undefined ? `${processes} proc${processes === 1 ? '' : 's'}` : live ? 'sampling…' : ''}</span>
      </span>
    </a>
  );
}

function RunBar({ run, view, live }: { run: RunResult; view: PhaseView; live: boolean }) {
  const limited = view.percent !== null;
  const width = limited ? `${view.percent}%` : '100%';
  const tone = view.phase === 'ended' ? `v-${statusOf(run)}` : `p-${view.phase}`;
  return (
    <span
      className={`runs-bar${limited ? '' : live ? ' indeterminate' : ' unlimited'}`}
      role="progressbar"
      aria-label={limited ? 'Elapsed of the limit' : 'Elapsed (no limit)'}
      aria-valuemin={limited ? 0 : undefined}
      aria-valuemax={limited ? 100 : undefined}
      aria-valuenow={limited ? (view.percent ?? undefined) : undefined}
      aria-valuetext={view.label}
      data-testid="run-bar"
      data-phase={view.phase}
    >
      <span className={`runs-bar-fill ${tone}`} style={{ width }} />
    </span>
  );
}

function RunsEmpty() {
  return (
    <section className="view runs">
      <div className="runs-empty" data-testid="runs-empty">
        <h1>No runs yet</h1>
        <p>Warden runs a command or a Python script under a time limit, keeps its output, and tells you why it ended.</p>
        <button type="button" className="primary" onClick={() => navigate({ view: 'new' })} data-testid="runs-empty-new">
          Start a run
        </button>
        <div className="runs-empty-cli">
          <p>Agents and terminals start runs with the CLI; they show up here live:</p>
          <pre>
            <code>warden run --limit 30s -- python3 script.py</code>
          </pre>
          <p>To use this UI from a browser, run a headless host:</p>
          <pre>
            <code>warden serve</code>
          </pre>
        </div>
      </div>
    </section>
  );
}
