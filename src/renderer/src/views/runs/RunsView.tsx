// Runs: live runs pinned in their own section above the ended ones, each row
// with its elapsed time against the limit and where its stop sequence stands;
// ended runs a page at a time; columns sortable. Rows are links to the run's
// detail; ArrowUp/ArrowDown move the selection, Enter opens.
//
// Repaint only what changes: a live row's time cell re-renders on the page's
// shared clock, once a second (four times while a stop counts down), every
// live row in the same task; its bar moves by transform (no layout); the rest
// of the row only when its run or the numbers it shows of the tree change; an
// ended row only when its run changes; the list for relative times every 15 s.

import { memo, useCallback, useEffect, useMemo, useRef, useState } from 'react';
import type { RunResult } from '../../../../shared/result';
import { useNow, useWallClock } from '../../components/hooks';
import { useLivePhase } from '../../components/live-phase';
import { Sparkline } from '../../components/Sparkline';
import { StoredSpark } from './StoredSpark';
import type { PhaseView } from '../../components/phase';
import { HostOptions, HostTag } from '../../components/HostTag';
import { ago, bytes, columnBytes, commandLine, duration, fullTime, liveDuration, memoryLimitOf, peakFigure, peakMeaning, peakName } from '../../format';
import { notificationsOn, turnNotificationsOff, turnNotificationsOn } from '../../components/Attention';
import { hrefOf, navigate } from '../../router';
import { isWebMode } from '../../web-api';
import { useKeptScroll } from '../../components/kept-scroll';
import { MonitorView } from '../monitor/MonitorView';
import { useLayout, type Layout, type LayoutChoice } from '../monitor/layout';
import { useWarden } from '../../store';
import { choiceLabel, DEFAULT_SORT, ENDED_PAGE, escapedIn, filterRuns, isLive, nextSort, peakOf, processBadges, sections, statusBadge, VERDICTS, type Sort, type SortKey, type StateFilter, type VerdictChoice } from './model';
import './runs.css';

function isTyping(target: EventTarget | null): boolean {
  return target instanceof HTMLElement && (target.isContentEditable || ['INPUT', 'SELECT', 'TEXTAREA', 'BUTTON'].includes(target.tagName));
}

const COLUMNS: { key: SortKey; label: string; className?: string }[] = [
  { key: 'status', label: 'Status' },
  { key: 'command', label: 'Command' },
  { key: 'started', label: 'Started', className: 'runs-started-col' },
  { key: 'duration', label: 'Duration / limit' },
  { key: 'memory', label: 'Peak memory', className: 'runs-num' },
];

/** What the view was showing when it was last left (filters, order, how many ended runs, the selection): Back finds it so. */
const remembered: { state: StateFilter; verdict: VerdictChoice | ''; host: string; sort: Sort; endedShown: number; selected: string | null } = {
  state: 'all',
  verdict: '',
  host: '',
  sort: DEFAULT_SORT,
  endedShown: ENDED_PAGE,
  selected: null,
};

export function RunsView() {
  const runs = useWarden((s) => s.runs);
  const order = useWarden((s) => s.order);
  const [layout, chooseLayout] = useLayout();
  const [stateFilter, setStateFilter] = useState<StateFilter>(remembered.state);
  const [verdictFilter, setVerdictFilter] = useState<VerdictChoice | ''>(remembered.verdict);
  const [hostFilter, setHostFilter] = useState(remembered.host);
  const manyHosts = useWarden((s) => s.hosts.length > 1);
  const [sort, setSort] = useState<Sort>(remembered.sort);
  const [endedShown, setEndedShown] = useState(remembered.endedShown);
  const [selected, setSelected] = useState<string | null>(remembered.selected);
  useEffect(() => {
    Object.assign(remembered, { state: stateFilter, verdict: verdictFilter, host: hostFilter, sort, endedShown, selected });
  });
  const rowRefs = useRef(new Map<string, HTMLAnchorElement>());

  const history = useWarden((s) => s.ended);
  const loadMoreEnded = useWarden((s) => s.loadMoreEnded);
  const all = useMemo(() => order.map((id) => runs[id]).filter((run): run is RunResult => run !== undefined), [order, runs]);
  const filtered = useMemo(() => filterRuns(all, { state: stateFilter, verdict: verdictFilter, host: hostFilter }), [all, stateFilter, verdictFilter, hostFilter]);
  const liveCount = all.filter(isLive).length;
  // Ended runs as the history counts them (the page holds the pages it fetched), else as the page holds them.
  const endedCount = Math.max(history.total ?? 0, all.length - liveCount);
  const wall = useWallClock(15_000);
  // Each live row keeps its own clock; the list itself re-renders for time only when sorted by duration (live runs move as they run).
  const sortNow = useNow(sort.key === 'duration' && liveCount > 0 ? 1000 : null);
  // Live runs sort by the figure their rows show: the latest sample's peak (read when sorting, not subscribed to).
  const { live, ended, endedTotal } = useMemo(
    () => sections(filtered, sort, endedShown, undefined, (run) => peakOf(run, isLive(run) ? useWarden.getState().trees[run.id] : undefined)),
    [filtered, sort, endedShown, sortNow],
  );
  const visible = useMemo(() => [...live, ...ended], [live, ended]);
  // Unfiltered, the history's count stands for the ended runs not fetched yet; filtered, only those held are known.
  const isFilteredNow = stateFilter !== 'all' || verdictFilter !== '' || hostFilter !== '';
  const endedAll = isFilteredNow || history.cursor === null ? endedTotal : Math.max(endedTotal, endedCount);

  const select = useCallback((id: string) => {
    setSelected(id);
    const row = rowRefs.current.get(id);
    row?.focus({ preventScroll: true });
    row?.scrollIntoView({ block: 'nearest' });
  }, []);

  useEffect(() => {
    // The monitor has keys of its own.
    if (layout === 'monitor') return undefined;
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
  }, [visible, selected, select, layout]);

  const rowRef = useCallback((id: string, el: HTMLAnchorElement | null) => {
    if (el) rowRefs.current.set(id, el);
    else rowRefs.current.delete(id);
  }, []);
  const onFocus = useCallback((id: string) => setSelected(id), []);

  // Where the reader was in the list, given back once its rows are there (Back from a run, another tab and back).
  const anchor = useRef<HTMLElement>(null);
  useKeptScroll('runs', anchor, all.length > 0);

  if (all.length === 0) return <RunsEmpty />;
  if (layout === 'monitor') {
    return (
      <MonitorView
        runs={all}
        toolbar={
          <>
            {isWebMode() && <NotifyToggle compact />}
            <LayoutToggle layout={layout} choose={chooseLayout} />
            <button type="button" className="primary" onClick={() => navigate({ view: 'new' })}>
              New run
            </button>
          </>
        }
      />
    );
  }

  const isFiltered = stateFilter !== 'all' || verdictFilter !== '' || hostFilter !== '';
  const row = (run: RunResult) => (
    <RunRow key={run.id} run={run} wall={wall} selected={run.id === selected} onFocus={onFocus} rowRef={rowRef} />
  );
  return (
    <section className="view runs" ref={anchor}>
      <header className="runs-head">
        <div className="runs-title">
          <h1>Runs</h1>
          <span className="muted" data-testid="runs-count">
            {liveCount} live · {endedCount} ended
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
            <select data-testid="filter-verdict" value={verdictFilter} onChange={(e) => setVerdictFilter(e.target.value as VerdictChoice | '')}>
              <option value="">Any</option>
              {VERDICTS.map((v) => (
                <option key={v} value={v}>
                  {choiceLabel(v)}
                </option>
              ))}
            </select>
          </label>
          {manyHosts && (
            <label>
              <span>Host</span>
              <select data-testid="filter-host" value={hostFilter} onChange={(e) => setHostFilter(e.target.value)}>
                <HostOptions />
              </select>
            </label>
          )}
          {isWebMode() && <NotifyToggle />}
          <LayoutToggle layout={layout} choose={chooseLayout} />
          <button type="button" className="primary" onClick={() => navigate({ view: 'new' })}>
            New run
          </button>
        </div>
      </header>

      <div className="runs-table" role="table" aria-label="Runs">
        <div className="runs-row runs-columns" role="row">
          {COLUMNS.map((c) => (
            <span key={c.key} role="columnheader" className={c.className} aria-sort={sort.key === c.key ? (sort.dir === 'asc' ? 'ascending' : 'descending') : 'none'}>
              <button type="button" className={`runs-sort${sort.key === c.key ? ' on' : ''}`} onClick={() => setSort((s) => nextSort(s, c.key))} data-testid={`sort-${c.key}`}>
                {c.label}
                <span className="runs-sort-arrow" aria-hidden="true">
                  {sort.key === c.key ? (sort.dir === 'asc' ? '▲' : '▼') : ''}
                </span>
              </button>
            </span>
          ))}
        </div>
        {visible.length === 0 ? (
          <div className="runs-none" data-testid="runs-none-match">
            <span>No runs match these filters.</span>
            <button
              type="button"
              onClick={() => {
                setStateFilter('all');
                setVerdictFilter('');
                setHostFilter('');
              }}
            >
              Show all runs
            </button>
          </div>
        ) : (
          <>
            {live.length > 0 && (
              <div className="runs-section" data-testid="runs-section-live" role="rowgroup" aria-label="Live runs">
                <div className="runs-section-head">Live · {live.length}</div>
                {live.map(row)}
              </div>
            )}
            {ended.length > 0 && (
              <div className="runs-section" data-testid="runs-section-ended" role="rowgroup" aria-label="Ended runs">
                <div className="runs-section-head" data-testid="runs-ended-head">
                  Ended · {endedAll > ended.length ? `${ended.length} of ${endedAll}` : endedAll}
                </div>
                {ended.map(row)}
                {endedAll > ended.length && (
                  <div className="runs-more">
                    <button
                      type="button"
                      disabled={history.loading}
                      onClick={() => {
                        setEndedShown((n) => n + ENDED_PAGE);
                        // The history's next page when the page holds no more to show.
                        if (endedTotal < endedShown + ENDED_PAGE) void loadMoreEnded();
                      }}
                      data-testid="runs-more"
                    >
                      Show {Math.min(ENDED_PAGE, endedAll - ended.length)} more
                    </button>
                  </div>
                )}
              </div>
            )}
          </>
        )}
      </div>
      {isFiltered && visible.length > 0 && (
        <p className="runs-foot muted">
          {live.length + endedTotal} of {liveCount + endedCount} runs match{history.cursor !== null ? ' (of those loaded)' : ''}
        </p>
      )}
      <p className="runs-foot muted">
        <kbd>↑</kbd> <kbd>↓</kbd> select · <kbd>Enter</kbd> open
      </p>
    </section>
  );
}

interface RowProps {
  run: RunResult;
  wall: number;
  selected: boolean;
  onFocus: (id: string) => void;
  rowRef: (id: string, el: HTMLAnchorElement | null) => void;
}

const RunRow = memo(function RunRow({ run, wall, selected, onFocus, rowRef }: RowProps) {
  // Only what the row shows of the live tree, as numbers: a new sample that
  // changes none of them renders nothing (two samples a second per run).
  const live = run.state !== 'ended';
  const escaped = useWarden((s) => (live ? escapedIn(s.trees[run.id]) : 0));
  // The tree's peak so far as two numbers (bytes, and whether it is the cgroup's): a sample that changes neither renders nothing.
  const treeRss = useWarden((s) => (live ? (s.trees[run.id]?.peak.rssBytes ?? s.trees[run.id]?.rssBytes) : undefined));
  const treeCgroup = useWarden((s) => (live ? s.trees[run.id]?.peak.source === 'cgroup' : false));
  const treeProcesses = useWarden((s) => (live ? s.trees[run.id]?.processes : undefined));
  const line = commandLine(run) || (run.kind === 'python' ? '(empty script)' : '');
  const badge = statusBadge(run);
  const extra = processBadges(run, escaped);
  const peak = peakFigure(run, treeRss === undefined ? undefined : { peak: { rssBytes: treeRss, processes: 0, ...(treeCgroup ? { source: 'cgroup' as const } : {}) }, rssBytes: treeRss });
  const memoryLimit = memoryLimitOf(run);
  const processes = live ? treeProcesses : run.peak?.processes;

  return (
    <a
      ref={(el) => rowRef(run.id, el)}
      href={hrefOf({ view: 'run', id: run.id, tab: null })}
      className={`runs-row run-row${selected ? ' selected' : ''}`}
      aria-current={selected ? 'true' : undefined}
      role="row"
      data-testid="run-row"
      data-run-id={run.id}
      data-state={run.state}
      data-verdict={run.verdict ?? ''}
      onFocus={() => onFocus(run.id)}
    >
      <span className="runs-status">
        <span className={`badge ${badge.tone}`} data-testid="run-badge" title={badge.title}>
          {badge.label}
        </span>
        {extra.map((b) => (
          <span key={b.label} className={`badge ${b.tone}`} data-testid="run-proc-badge" title={b.title}>
            {b.label}
          </span>
        ))}
      </span>
      <span className="runs-command">
        <code className="runs-line" title={run.kind === 'python' ? run.code : line}>
          {line}
        </code>
        <span className="runs-meta">
          {run.kind === 'python' ? (
            <>
              <span className="runs-kind">python</span>
              <span className="runs-shrink" data-testid="run-session">
                session {run.session ?? 'default'}
              </span>
            </>
          ) : (
            <span className="runs-kind">command</span>
          )}
          <span className="runs-started-meta" title={fullTime(run.startedAt)}>
            {ago(run.startedAt, wall)}
          </span>
          <HostTag id={run.id} />
          <span className="runs-id">{run.id.slice(0, 8)}</span>
        </span>
      </span>
      <span className="runs-started" title={fullTime(run.startedAt)} data-testid="run-started">
        {ago(run.startedAt, wall)}
      </span>
      <RunTime run={run} live={live} status={badge.tone} />
      <span className="runs-num runs-memory">
        <span className="runs-peak-line">
          {live ? <RowSpark id={run.id} limitBytes={memoryLimit} /> : run.verdict === 'lost' && <StoredSpark id={run.id} limitBytes={memoryLimit} />}
          <span data-testid="run-peak" data-source={peak?.source} title={peak ? `${peakName(peak.source)}${live ? ' so far' : ''}: ${peakMeaning(peak.source)}` : undefined}>
            {columnBytes(peak?.bytes)}
          </span>
        </span>
        <span className="muted">
          {memoryLimit !== undefined ? (
            <span data-testid="run-memory-limit">of {bytes(memoryLimit)} limit</span>
          ) : processes !== undefined ? (
            <span data-testid="run-processes" title={live ? 'Processes alive now' : 'The most of its processes alive at once'}>{`${processes} proc${processes === 1 ? '' : 's'}${live ? '' : ' at most'}`}</span>
          ) : live ? (
            'sampling…'
          ) : (
            ''
          )}
        </span>
      </span>
    </a>
  );
});

/** A live run's sparkline: re-renders when its series gains a sample, not the row. */
function RowSpark({ id, limitBytes }: { id: string; limitBytes?: number }) {
  const spark = useWarden((s) => s.series[id]?.points);
  return spark ? <Sparkline points={spark} limitBytes={limitBytes} /> : null;
}

/**
 * The row's time cell: its bar, elapsed time and stop phase, on the page's
 * shared clock (hooks.ts useNow), so the rest of the row is not rendered per
 * tick and all live rows change in one task: once a second, whole seconds.
 */
function RunTime({ run, live, status }: { run: RunResult; live: boolean; status: string }) {
  const now = useNow(live ? 1000 : null);
  const { view, elapsedMs } = useLivePhase(run, now);
  return (
    <span className="runs-time">
      {(live || run.limitMs !== null) && <RunBar view={view} live={live} status={status} />}
      <span className="runs-time-text">
        <span className="runs-elapsed" data-testid="run-duration">
          {live ? liveDuration(elapsedMs) : duration(elapsedMs)}
          <span className="muted"> {run.limitMs === null ? '· no limit' : `/ ${duration(run.limitMs)}`}</span>
        </span>
        {live && (
          <span className={`runs-phase phase-${view.phase}`} data-testid="run-phase" title={view.estimated ? 'Time to SIGKILL estimated from the default grace (a run does not report its own)' : undefined}>
            {view.label}
          </span>
        )}
      </span>
    </span>
  );
}

function RunBar({ view, live, status }: { view: PhaseView; live: boolean; status: string }) {
  const limited = view.percent !== null;
  const tone = view.phase === 'ended' ? `v-${status}` : `p-${view.phase}`;
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
      {/* scaleX, not width: the compositor moves it, nothing is laid out again. */}
      <span className={`runs-bar-fill ${tone}`} style={{ transform: `scaleX(${limited ? (view.percent ?? 0) / 100 : 1})` }} />
    </span>
  );
}

/** The layout of Runs: the monitor (list and run side by side) or the list alone; the reader's choice is kept in this browser. */
function LayoutToggle({ layout, choose }: { layout: Layout; choose: (choice: LayoutChoice) => void }) {
  return (
    <span className="layout-toggle" role="group" aria-label="Layout">
      {(['monitor', 'list'] as const).map((l) => (
        <button key={l} type="button" className={layout === l ? 'on' : undefined} aria-pressed={layout === l} onClick={() => choose(l)} data-testid={`layout-${l}`} title={l === 'monitor' ? 'The runs and the selected run side by side (the default on a wide screen)' : 'The runs alone, as a table'}>
          {l === 'monitor' ? 'Monitor' : 'List'}
        </button>
      ))}
    </span>
  );
}

/** What the page says when the browser says no to notifications. */
const REFUSED: Record<'denied' | 'default', string> = {
  denied: 'This browser blocks notifications from this page. Allow them in its site settings (the icon left of the address), then click again.',
  default: 'The browser was not given an answer about notifications. Click again to be asked again.',
};

/** Browser notifications for failed runs: off by default, asked for once, per browser; a refusal is said, with the way to undo it. `compact`: one word, for the monitor's narrow toolbar. */
function NotifyToggle({ compact = false }: { compact?: boolean }) {
  const [on, setOn] = useState(notificationsOn);
  const [refused, setRefused] = useState<'denied' | 'default' | null>(null);
  if (typeof Notification === 'undefined') return null;
  return (
    <span className={`notify-toggle${compact ? ' compact' : ''}`}>
      <button
        type="button"
        aria-pressed={on}
        className={on ? 'on' : undefined}
        title={on ? 'A notification when a run fails while this tab is hidden (click to turn off)' : 'Ask this browser to notify you when a run fails while this tab is hidden'}
        data-testid="notify-toggle"
        onClick={() => {
          if (on) {
            turnNotificationsOff();
            setOn(false);
            return;
          }
          void turnNotificationsOn().then((answer) => {
            setOn(answer === 'granted');
            setRefused(answer === 'granted' ? null : answer);
          });
        }}
      >
        {compact ? (on ? 'Notifying' : 'Notify') : on ? 'Notifying of failures' : 'Notify me of failures'}
      </button>
      {refused && (
        <span className="notify-refused" role="alert" data-testid="notify-refused">
          <span>{REFUSED[refused]}</span>
          <button type="button" className="notify-dismiss" onClick={() => setRefused(null)} aria-label="Dismiss" title="Dismiss">
            ×
          </button>
        </span>
      )}
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
