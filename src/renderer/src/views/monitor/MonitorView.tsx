// The monitor: the runs list on the left, grouped by who started them (an
// agent, a terminal), the selected run's log, tree or summary on the right
// (the tab kept as the selection moves), or a group's merged live tail. A
// screen to leave open all day, driven from the keyboard as htop and
// process-compose are: j/k or the arrows move, Enter opens the run's page (or
// folds a group), s stops, l the log, t the tree, / searches, f follows a
// group's newest run.

import { lazy, memo, Suspense, useCallback, useEffect, useMemo, useRef, useState } from 'react';
import type { RunResult } from '../../../../shared/result';
import type { Tab } from '../../router';
import { navigate } from '../../router';
import { useNow } from '../../components/hooks';
import { columnBytes, commandLine, duration, liveDuration, peakFigure } from '../../format';
import { liveElapsed, useWarden } from '../../store';
import { statusBadge } from '../runs/model';
import { followedPick, groupRuns, moveSelection, rowsOf, searchRuns, type RunGroup, type Selection } from './model';
import { MergedTail } from './MergedTail';
import './monitor.css';

const RunDetail = lazy(() => import('../run/RunDetail').then((m) => ({ default: m.RunDetail })));

function isTyping(target: EventTarget | null): boolean {
  return target instanceof HTMLElement && (target.isContentEditable || ['INPUT', 'SELECT', 'TEXTAREA'].includes(target.tagName));
}

/** What the monitor was showing when it was last left: Back and another tab find it so. */
const kept: { selection: Selection; tab: Tab; query: string; collapsed: Set<string>; followed: Set<string> } = {
  selection: null,
  tab: 'output',
  query: '',
  collapsed: new Set(),
  followed: new Set(),
};

export function MonitorView({ runs, toolbar }: { runs: RunResult[]; toolbar: React.ReactNode }) {
  const api = useWarden((s) => s.api);
  const put = useWarden((s) => s.put);
  const report = useWarden((s) => s.report);
  const [selection, setSelection] = useState<Selection>(kept.selection);
  const [tab, setTab] = useState<Tab>(kept.tab);
  const [query, setQuery] = useState(kept.query);
  const [collapsed, setCollapsed] = useState<Set<string>>(kept.collapsed);
  const [followed, setFollowed] = useState<Set<string>>(kept.followed);
  useEffect(() => {
    Object.assign(kept, { selection, tab, query, collapsed, followed });
  });
  const search = useRef<HTMLInputElement>(null);
  const list = useRef<HTMLDivElement>(null);

  const groups = useMemo(() => groupRuns(searchRuns(runs, query)), [runs, query]);
  const rows = useMemo(() => rowsOf(groups, collapsed), [groups, collapsed]);
  // Opened with nothing chosen: the first run (the newest live one of the busiest group) is shown at once.
  useEffect(() => {
    if (selection !== null) return;
    const first = rows.find((row) => row.kind === 'run');
    if (first?.kind === 'run') setSelection({ kind: 'run', id: first.run.id });
  }, [rows, selection]);

  // Follow newest: a new run of a followed group is selected as it starts.
  const known = useRef<Set<string> | null>(null);
  useEffect(() => {
    const ids = new Set(runs.map((r) => r.id));
    if (known.current) {
      const pick = followedPick(groups, followed, known.current);
      if (pick) setSelection({ kind: 'run', id: pick });
    }
    known.current = ids;
  }, [runs, groups, followed]);

  const select = useCallback((next: Selection) => {
    setSelection(next);
    if (!next) return;
    const selector = next.kind === 'run' ? `[data-run-id="${next.id}"]` : `[data-group-key="${CSS.escape(next.key)}"]`;
    requestAnimationFrame(() => list.current?.querySelector(selector)?.scrollIntoView({ block: 'nearest' }));
  }, []);
  const toggleGroup = useCallback((key: string) => {
    setCollapsed((current) => {
      const next = new Set(current);
      if (next.has(key)) next.delete(key);
      else next.add(key);
      return next;
    });
  }, []);
  const toggleFollow = useCallback((key: string) => {
    setFollowed((current) => {
      const next = new Set(current);
      if (next.has(key)) next.delete(key);
      else next.add(key);
      return next;
    });
  }, []);

  const selectedRun = selection?.kind === 'run' ? runs.find((r) => r.id === selection.id) : undefined;
  const selectedGroup = selection?.kind === 'group' ? groups.find((g) => g.key === selection.key) : undefined;
  const groupOfSelected = selectedRun ? groups.find((g) => g.runs.some((r) => r.id === selectedRun.id)) : selectedGroup;

  const stop = useCallback(
    async (run: RunResult) => {
      if (!api || run.state === 'ended') return;
      try {
        put(await api.stop(run.id));
      } catch (error) {
        report(error);
      }
    },
    [api, put, report],
  );

  useEffect(() => {
    const onKey = (event: KeyboardEvent) => {
      if (event.altKey || event.ctrlKey || event.metaKey) return;
      if (isTyping(event.target)) {
        if (event.key === 'Escape' && event.target === search.current) search.current?.blur();
        return;
      }
      // Keys typed in the run pane (its search, its buttons) are its own.
      if (event.target instanceof HTMLElement && event.target.closest('.mon-detail') && !['j', 'k', 'ArrowDown', 'ArrowUp'].includes(event.key)) return;
      const key = event.key;
      if (key === 'j' || key === 'ArrowDown' || key === 'k' || key === 'ArrowUp') {
        event.preventDefault();
        select(moveSelection(rows, selection, key === 'j' || key === 'ArrowDown' ? 1 : -1));
      } else if (key === 'Enter' && selection) {
        event.preventDefault();
        if (selection.kind === 'run') navigate({ view: 'run', id: selection.id, tab: null });
        else toggleGroup(selection.key);
      } else if ((key === 'ArrowLeft' || key === 'ArrowRight') && selection?.kind === 'group') {
        event.preventDefault();
        if (collapsed.has(selection.key) !== (key === 'ArrowLeft')) toggleGroup(selection.key);
      } else if (key === 's' && selectedRun) {
        event.preventDefault();
        void stop(selectedRun);
      } else if (key === 'l') {
        setTab('output');
      } else if (key === 't') {
        setTab('tree');
      } else if (key === '/') {
        event.preventDefault();
        search.current?.focus();
        search.current?.select();
      } else if (key === 'f' && groupOfSelected) {
        toggleFollow(groupOfSelected.key);
      }
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [rows, selection, select, collapsed, toggleGroup, toggleFollow, selectedRun, groupOfSelected, stop]);

  return (
    <section className="monitor" data-testid="monitor">
      <aside className="mon-list" aria-label="Runs by who started them">
        <div className="mon-toolbar">
          <input
            ref={search}
            type="search"
            className="mon-search"
            value={query}
            onChange={(e) => setQuery(e.target.value)}
            placeholder="Search runs ( / )"
            aria-label="Search runs"
            spellCheck={false}
            data-testid="monitor-search"
          />
          {toolbar}
        </div>
        <div className="mon-columns" aria-hidden="true">
          <span>Run</span>
          <span className="num">Time</span>
          <span className="num">CPU</span>
          <span className="num">Memory</span>
        </div>
        <div className="mon-rows" ref={list} role="listbox" aria-label="Runs" data-testid="monitor-rows">
          {rows.length === 0 && <p className="muted mon-none">{query ? 'No run matches.' : 'No runs yet.'}</p>}
          {rows.map((row) =>
            row.kind === 'group' ? (
              <GroupRow
                key={`g:${row.group.key}`}
                group={row.group}
                collapsed={row.collapsed}
                followed={followed.has(row.group.key)}
                selected={selection?.kind === 'group' && selection.key === row.group.key}
                onSelect={select}
                onToggle={toggleGroup}
                onFollow={toggleFollow}
              />
            ) : (
              <MonitorRow key={row.run.id} run={row.run} selected={selection?.kind === 'run' && selection.id === row.run.id} onSelect={select} />
            ),
          )}
        </div>
        <p className="mon-keys muted">
          <kbd>j</kbd>/<kbd>k</kbd> move · <kbd>Enter</kbd> open · <kbd>s</kbd> stop · <kbd>l</kbd> log · <kbd>t</kbd> tree · <kbd>/</kbd> search · <kbd>f</kbd> follow newest
        </p>
      </aside>
      <div className="mon-detail" data-testid="monitor-detail">
        {selectedRun ? (
          <Suspense fallback={<p className="muted mon-hint">Loading…</p>}>
            <RunDetail key={selectedRun.id} id={selectedRun.id} tab={tab} onTab={setTab} />
          </Suspense>
        ) : selectedGroup ? (
          <MergedTail group={selectedGroup} />
        ) : (
          <div className="mon-hint muted">
            <p>Select a run to see its log, tree or summary here, or a group for the merged tail of its live runs.</p>
          </div>
        )}
      </div>
    </section>
  );
}

const GroupRow = memo(function GroupRow({
  group,
  collapsed,
  followed,
  selected,
  onSelect,
  onToggle,
  onFollow,
}: {
  group: RunGroup;
  collapsed: boolean;
  followed: boolean;
  selected: boolean;
  onSelect: (s: Selection) => void;
  onToggle: (key: string) => void;
  onFollow: (key: string) => void;
}) {
  return (
    <div
      className={`mon-group${selected ? ' selected' : ''}`}
      role="option"
      aria-selected={selected}
      data-testid="monitor-group"
      data-group-key={group.key}
      data-live={group.live}
      data-failed={group.failed}
      onClick={() => onSelect({ kind: 'group', key: group.key })}
    >
      <button
        type="button"
        className="mon-fold"
        aria-expanded={!collapsed}
        aria-label={collapsed ? 'Show its runs' : 'Hide its runs'}
        onClick={(e) => {
          e.stopPropagation();
          onToggle(group.key);
        }}
        data-testid="monitor-group-fold"
      >
        {collapsed ? '▸' : '▾'}
      </button>
      <span className="mon-group-who" title={group.cwd ?? undefined}>
        <strong>{group.label}</strong>
        {group.pid !== null && <span className="muted"> · pid {group.pid}</span>}
        {group.cwd !== null && <span className="muted mon-cwd"> · {group.cwd}</span>}
      </span>
      <span className="mon-group-counts">
        {group.live > 0 && <span className="badge running" data-testid="monitor-group-live">{group.live} live</span>}
        {group.failed > 0 && <span className="badge failed" data-testid="monitor-group-failed">{group.failed} failed</span>}
        <span className="muted">{group.runs.length}</span>
      </span>
      <button
        type="button"
        className={`mon-follow${followed ? ' on' : ''}`}
        aria-pressed={followed}
        title="Follow newest: select each new run of this group as it starts (f)"
        onClick={(e) => {
          e.stopPropagation();
          onFollow(group.key);
        }}
        data-testid="monitor-follow"
      >
        follow
      </button>
    </div>
  );
});

const MonitorRow = memo(function MonitorRow({ run, selected, onSelect }: { run: RunResult; selected: boolean; onSelect: (s: Selection) => void }) {
  const live = run.state !== 'ended';
  // Numbers, not the sample: a sample that changes neither renders nothing.
  const cpu = useWarden((s) => (live ? s.trees[run.id]?.cpuPercent : undefined));
  const rss = useWarden((s) => (live ? s.trees[run.id]?.rssBytes : undefined));
  const badge = statusBadge(run);
  const peak = live ? undefined : peakFigure(run);
  return (
    <div
      className={`mon-row${selected ? ' selected' : ''}`}
      role="option"
      aria-selected={selected}
      data-testid="monitor-row"
      data-run-id={run.id}
      data-state={run.state}
      data-verdict={run.verdict ?? ''}
      onClick={() => onSelect({ kind: 'run', id: run.id })}
      onDoubleClick={() => navigate({ view: 'run', id: run.id, tab: null })}
    >
      <span className="mon-run">
        <span className={`badge ${badge.tone}`} title={badge.title}>
          {badge.label}
        </span>
        <code className="mon-command" title={commandLine(run)}>
          {commandLine(run) || '(empty script)'}
        </code>
      </span>
      <span className="num mon-time">{live ? <LiveTime run={run} /> : duration(run.elapsedMs)}</span>
      <span className="num mon-cpu" data-testid="monitor-cpu" title={live ? 'CPU now, % of one core' : undefined}>
        {cpu === undefined ? '' : `${Math.round(cpu)} %`}
      </span>
      <span className="num mon-rss" data-testid="monitor-rss" title={live ? 'Memory now: the sum of its processes\u2019 RSS' : peak ? 'Its peak' : undefined}>
        {live ? (rss === undefined ? '' : columnBytes(rss)) : peak ? columnBytes(peak.bytes) : ''}
      </span>
    </div>
  );
});

/** A live run's elapsed time, on the page's one-second clock. */
function LiveTime({ run }: { run: RunResult }) {
  const syncedAt = useWarden((s) => s.syncedAt[run.id]);
  const now = useNow(1000);
  return <>{liveDuration(liveElapsed(run, syncedAt, now))}</>;
}

