// History: every run the history holds, past and live, newest first, a page
// at a time. Filters restart the paging; only the newest request's answer is
// ever shown. Runs the page knows live (from the store) are shown as they
// stand now rather than as they were listed.

import { ALL_HOSTS } from '../../../../shared/hosts';
import { HostOptions, HostTag } from '../../components/HostTag';
import { memo, useCallback, useEffect, useMemo, useReducer, useRef, useState, type ChangeEvent } from 'react';
import { useShallow } from 'zustand/react/shallow';
import type { HistoryQuery } from '../../../../shared/api';
import type { RunSummary } from '../../../../shared/history';
import { useNow, useWallClock } from '../../components/hooks';
import { ago, clock, columnBytes, duration, fullTime, liveDuration, peakFigure, peakMeaning, peakName } from '../../format';
import { choiceLabel, statusBadge, summaryBadges } from '../runs/model';
import { hrefOf, navigate, replaceRoute } from '../../router';
import { messageOf, useWarden } from '../../store';
import { useKeptScroll } from '../../components/kept-scroll';
import {
  EMPTY_LIST,
  DEFAULT_HISTORY_SORT,
  countChips,
  elapsedNow,
  nextHistorySort,
  type HistorySort,
  NO_FILTERS,
  RANGES,
  VERDICTS,
  exitText,
  filtersKey,
  firstLine,
  isFiltered,
  isRangeKey,
  isVerdictFilter,
  listReducer,
  parseExitCode,
  placeFromQuery,
  queryOf,
  queryOfPlace,
  withLive,
  type HistoryFilters,
  type HistoryPlace,
  type ListState,
} from './model';
import { scrollParentOf } from './scroll';
import './history.css';

/** How long typing in a text filter must pause before it is sent. */
const DEBOUNCE_MS = 250;
/** Load the next page once the list's end is this close to being scrolled into view. */
const NEAR_BOTTOM_PX = 600;

// The filters, the order and the list itself outlive the view, so coming back from a run finds the list as it was
// (where the link names no filters of its own: a link's filters win).
let remembered: HistoryPlace = { filters: NO_FILTERS, sort: DEFAULT_HISTORY_SORT, host: '' };
let rememberedList: { key: string; list: ListState } | null = null;

/** The filters a link names, else the ones the page last showed. */
function initialPlace(query: string | undefined): HistoryPlace {
  return query ? placeFromQuery(query) : remembered;
}

/** A list's identity: its filters, order and host. */
function listKey(place: HistoryPlace): string {
  return JSON.stringify([filtersKey(place.filters), place.sort, place.host]);
}

export function HistoryView({ query: linked }: { query?: string }) {
  const api = useWarden((s) => s.api);
  const offline = useWarden((s) => s.connection !== 'online');
  const [start] = useState(() => initialPlace(linked));

  // `filters` follow the inputs; `applied` is what the list shows (typed filters arrive debounced).
  const [filters, setFilters] = useState<HistoryFilters>(start.filters);
  const [applied, setApplied] = useState<HistoryFilters>(start.filters);
  const debounce = useRef<ReturnType<typeof setTimeout> | null>(null);
  useEffect(() => () => void (debounce.current && clearTimeout(debounce.current)), []);

  const update = useCallback((next: HistoryFilters, at: 'now' | 'debounced') => {
    setFilters(next);
    if (debounce.current) clearTimeout(debounce.current);
    debounce.current = null;
    if (at === 'now') setApplied(next);
    else debounce.current = setTimeout(() => setApplied(next), DEBOUNCE_MS);
  }, []);

  // Whose history: '' every host at once (once a remote is configured), else one host's.
  const manyHosts = useWarden((s) => s.hosts.length > 1);
  const [hostScope, setHostScope] = useState(start.host);
  const [sort, setSort] = useState<HistorySort>(start.sort);
  const place: HistoryPlace = { filters: applied, sort, host: hostScope };
  const key = listKey(place);
  const wall = useWallClock(15_000);
  // The list as it was when the view was last shown, for the same filters: on screen at once, asked again below.
  const [list, dispatch] = useReducer(listReducer, undefined, () => (rememberedList?.key === listKey({ filters: start.filters, sort: start.sort, host: start.host }) ? rememberedList.list : EMPTY_LIST));
  const seq = useRef(0);
  const query = useRef<HistoryQuery | null>(null);
  const [reloads, setReloads] = useState(0);
  const fetchedKey = useRef<string | null>(list.loaded ? key : null);

  // The list, the filters and the link kept current: a reload, a link sent or Back finds them.
  useEffect(() => {
    remembered = place;
    if (list.loaded && !list.replacing) rememberedList = { key, list };
  });
  const placeQuery = queryOfPlace(place);
  const wrote = useRef<string | null>(null);
  useEffect(() => {
    wrote.current = placeQuery;
    replaceRoute({ view: 'history', query: placeQuery });
  }, [placeQuery]);
  // A link changed under the view (edited, Back or Forward between two filters): its filters, shown.
  useEffect(() => {
    const next = placeFromQuery(linked);
    // The same place written another way (its fields in another order) is no change.
    if (queryOfPlace(next) === wrote.current) return;
    wrote.current = linked ?? '';
    setFilters(next.filters);
    setApplied(next.filters);
    setSort(next.sort);
    setHostScope(next.host);
  }, [linked]);

  const fetchPage = useCallback(
    (q: HistoryQuery, append: boolean, refresh = false, pageSort: HistorySort = DEFAULT_HISTORY_SORT) => {
      if (!api) return;
      const n = ++seq.current;
      dispatch({ type: 'request', seq: n, append, refresh });
      // Said once: inline, where the list is (the connection bar says a host away); never a banner as well.
      api.history(q).then(
        (page) => dispatch({ type: 'page', seq: n, page, append, sort: pageSort }),
        (error: unknown) => dispatch({ type: 'failed', seq: n, error: messageOf(error) }),
      );
    },
    [api],
  );

  // A new list when what the filters ask for changes (not on every keystroke that changes nothing);
  // the same filters asked again (Refresh, the view shown again) keep the rows on screen until the answer.
  const appliedKey = filtersKey(applied);
  useEffect(() => {
    // The time range is anchored when the filters change and kept for every page after.
    const first = { ...queryOf(applied, Date.now(), undefined, sort), ...(manyHosts ? { host: hostScope || ALL_HOSTS } : {}) };
    query.current = first;
    fetchPage(first, false, fetchedKey.current === key, sort);
    fetchedKey.current = key;
    // `applied` is read through its key: a same-meaning copy must not restart the paging.
  }, [appliedKey, reloads, fetchPage, sort, manyHosts, hostScope]);

  // Back from an outage with rows it could not refresh: asked again by itself.
  useEffect(() => {
    if (!offline && list.stale) setReloads((n) => n + 1);
  }, [offline]);

  // Where the reader was, given back once the rows are there.
  const anchor = useRef<HTMLElement>(null);
  useKeptScroll('history', anchor, list.loaded && list.runs.length > 0);

  const loadMore = useCallback(() => {
    if (!query.current || list.loading || !list.nextCursor) return;
    // Later pages need no counts: the first page's stand for the filters.
    fetchPage({ ...query.current, cursor: list.nextCursor, counts: false }, true);
  }, [fetchPage, list.loading, list.nextCursor]);

  // Scrolled near the end: the next page. Observing anew after each page also
  // catches an end still in view once a short page has arrived.
  const end = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const target = end.current;
    if (!target || list.loading || !list.nextCursor || typeof IntersectionObserver === 'undefined') return;
    const observer = new IntersectionObserver((entries) => entries.some((e) => e.isIntersecting) && loadMore(), {
      root: scrollParentOf(target),
      rootMargin: `0px 0px ${NEAR_BOTTOM_PX}px 0px`,
    });
    observer.observe(target);
    return () => observer.disconnect();
  }, [loadMore, list.loading, list.nextCursor]);

  const liveIds = useMemo(() => list.runs.filter((r) => r.state !== 'ended').map((r) => r.id), [list.runs]);
  const live = useWarden(useShallow((s) => liveIds.map((id) => s.runs[id])));
  const rows = useMemo(() => {
    const byId = new Map(liveIds.map((id, i) => [id, live[i]]));
    return list.runs.map((run) => withLive(run, byId.get(run.id)));
  }, [list.runs, liveIds, live]);

  const filtered = isFiltered(applied);
  const exitInvalid = parseExitCode(filters.exitCode) === null;
  const clear = () => update(NO_FILTERS, 'now');

  const onSelect = (key: 'verdict' | 'range') => (event: ChangeEvent<HTMLSelectElement>) => {
    const value = event.target.value;
    if (key === 'verdict' && isVerdictFilter(value)) update({ ...filters, verdict: value }, 'now');
    if (key === 'range' && isRangeKey(value)) update({ ...filters, range: value }, 'now');
  };
  const onType = (key: 'text' | 'session' | 'exitCode') => (event: ChangeEvent<HTMLInputElement>) => update({ ...filters, [key]: event.target.value }, 'debounced');

  return (
    <section className="view history" ref={anchor}>
      <header className="history-head">
        <h1>History</h1>
        <span className="history-count muted" aria-live="polite">
          {list.loaded && !list.replacing && rows.length > 0 && `${rows.length}${list.nextCursor ? '+' : ''} run${rows.length === 1 && !list.nextCursor ? '' : 's'}`}
        </span>
        {list.stale && offline && (
          <span className="history-stale-note muted" data-testid="history-stale" title="The host cannot be reached: these rows are as they were last loaded, and are loaded again once it is back">
            as last loaded
          </span>
        )}
        {list.loading && !offline && (
          <span className="history-loading muted" role="status">
            <span className="history-spinner" aria-hidden="true" />
            Loading…
          </span>
        )}
        <span className="history-head-spacer" />
        {filtered && rows.length > 0 && (
          <button type="button" onClick={clear} data-testid="history-clear">
            Clear filters
          </button>
        )}
        <button type="button" onClick={() => setReloads((n) => n + 1)} disabled={list.loading && list.replacing}>
          Refresh
        </button>
      </header>

      <div className="history-filters" role="search">
        <label className="history-field history-field-search">
          <span>Search</span>
          <input
            type="search"
            value={filters.text}
            onChange={onType('text')}
            placeholder="Words in the command, script or output"
            spellCheck={false}
            data-testid="history-search"
          />
        </label>
        <label className="history-field">
          <span>Verdict</span>
          <select value={filters.verdict} onChange={onSelect('verdict')} data-testid="history-verdict">
            <option value="">Any</option>
            <option value="live">Live (queued, running)</option>
            {VERDICTS.map((v) => (
              <option key={v} value={v}>
                {choiceLabel(v)}
              </option>
            ))}
          </select>
        </label>
        {manyHosts && (
          <label className="history-field">
            <span>Host</span>
            <select value={hostScope} onChange={(e) => setHostScope(e.target.value)} data-testid="history-host">
              <HostOptions />
            </select>
          </label>
        )}
        <label className="history-field">
          <span>Started</span>
          <select value={filters.range} onChange={onSelect('range')} data-testid="history-range">
            {RANGES.map((r) => (
              <option key={r.key} value={r.key}>
                {r.label}
              </option>
            ))}
          </select>
        </label>
        <label className="history-field history-field-session">
          <span>Session</span>
          <input type="text" value={filters.session} onChange={onType('session')} placeholder="Any" spellCheck={false} data-testid="history-session" />
        </label>
        <label className="history-field history-field-exit">
          <span>Exit code</span>
          <input
            type="text"
            inputMode="numeric"
            value={filters.exitCode}
            onChange={onType('exitCode')}
            placeholder="Any"
            aria-invalid={exitInvalid}
            title={exitInvalid ? 'A whole number, such as 1 or -2' : undefined}
            data-testid="history-exit"
          />
        </label>
      </div>

      <CountChips counts={list.counts} verdict={filters.verdict} onPick={(verdict) => update({ ...filters, verdict: filters.verdict === verdict ? '' : verdict }, 'now')} />

      {rows.length > 0 && (
        <table className={`data-table history-table${list.replacing || list.stale ? ' stale' : ''}`} aria-busy={list.loading} data-testid="history-table" data-stale={list.stale ? 'true' : 'false'}>
          <colgroup>
            <col className="col-started" />
            <col />
            <col className="col-session" />
            <col className="col-status" />
            <col className="col-exit" />
            <col className="col-elapsed" />
            <col className="col-peak" />
          </colgroup>
          <thead>
            <tr>
              <SortHeader label="Started" column="started" sort={sort} onSort={setSort} />
              <th scope="col">Command or script</th>
              <th scope="col">Session</th>
              <th scope="col">Verdict</th>
              <th scope="col" className="num">
                Exit
              </th>
              <SortHeader label="Elapsed" column="elapsed" sort={sort} onSort={setSort} num />
              <SortHeader label="Peak memory" column="peak" sort={sort} onSort={setSort} num />
            </tr>
          </thead>
          <tbody>
            {rows.map((run) => (
              <Row key={run.id} run={run} wall={wall} />
            ))}
          </tbody>
        </table>
      )}

      {/* The host away is said once, by the connection bar: the rows stay, greyed, until it is back. */}
      {list.error && !offline && (
        <div className="history-error" role="alert" data-testid="history-error">
          <span className="error">{list.stale ? 'Could not refresh the history (the rows shown are from before)' : 'Could not load the history'}: {list.error}</span>
          <button type="button" onClick={() => (rows.length > 0 && list.nextCursor && !list.stale ? loadMore() : setReloads((n) => n + 1))}>
            Retry
          </button>
        </div>
      )}

      {list.loaded && !list.loading && !list.error && rows.length === 0 && (filtered ? <NoMatch searching={applied.text.trim() !== ''} onClear={clear} /> : <NoRuns />)}

      {rows.length > 0 && list.nextCursor && (
        <div className="history-more" ref={end}>
          <button type="button" onClick={loadMore} disabled={list.loading} data-testid="history-more">
            {list.loading && !list.replacing ? 'Loading…' : 'Load more'}
          </button>
        </div>
      )}
      {rows.length > 0 && list.loaded && !list.nextCursor && !list.replacing && <p className="history-end muted">That is every run{filtered ? ' that matches' : ''}.</p>}
    </section>
  );
}

function SortHeader({ label, column, sort, onSort, num = false }: { label: string; column: HistorySort['key']; sort: HistorySort; onSort: (next: HistorySort) => void; num?: boolean }) {
  const on = sort.key === column;
  return (
    <th scope="col" className={num ? 'num' : undefined} aria-sort={on ? (sort.dir === 'asc' ? 'ascending' : 'descending') : 'none'}>
      <button type="button" className={`history-sort${on ? ' on' : ''}`} onClick={() => onSort(nextHistorySort(sort, column))} data-testid={`history-sort-${column}`}>
        {label}
        <span className="history-sort-arrow" aria-hidden="true">
          {on ? (sort.dir === 'asc' ? '▲' : '▼') : ''}
        </span>
      </button>
    </th>
  );
}

/** How many runs each verdict has under the other filters; a chip filters by its verdict (again: clears it). */
function CountChips({ counts, verdict, onPick }: { counts: ReturnType<typeof listReducer>['counts']; verdict: string; onPick: (verdict: 'live' | (typeof VERDICTS)[number]) => void }) {
  // The same words as the badges: an out-of-memory kill is "out of memory", its own chip.
  const chips = countChips(counts);
  if (!counts || chips.length === 0) return null;
  return (
    <div className="history-counts" data-testid="history-counts" aria-label="Runs per verdict">
      <span className="muted">{counts.total.toLocaleString('en-US')} in all:</span>
      {chips.map((chip) => (
        <button
          key={chip.verdict}
          type="button"
          className={`history-chip${verdict === chip.verdict ? ' on' : ''}`}
          aria-pressed={verdict === chip.verdict}
          onClick={() => onPick(chip.verdict)}
          data-testid="history-count"
          data-verdict={chip.verdict}
        >
          <span className={`badge ${chip.verdict === 'live' ? 'running' : chip.verdict}`}>{choiceLabel(chip.verdict)}</span>
          <span className="history-chip-n">{chip.count.toLocaleString('en-US')}</span>
        </button>
      ))}
    </div>
  );
}

const Row = memo(function Row({ run, wall }: { run: RunSummary; wall: number }) {
  const line = firstLine(run);
  const target = { view: 'run', id: run.id, tab: null } as const;
  // The same words and badges as Runs and the detail: an out-of-memory kill, processes left behind.
  const badge = statusBadge(run);
  const extra = run.state === 'ended' ? summaryBadges(run) : [];
  return (
    <tr className="history-row" data-testid="history-row" data-run-id={run.id} onClick={() => navigate(target)}>
      <td className="history-started">
        <time dateTime={run.startedAt} title={fullTime(run.startedAt)} data-testid="history-started">
          <span className="history-ago">{ago(run.startedAt, wall)}</span>
          <span className="history-clock">{clock(run.startedAt)}</span>
        </time>
      </td>
      <td className="history-command">
        <a href={hrefOf(target)} title={run.kind === 'python' ? (run.code ?? line) : line} onClick={(e) => e.stopPropagation()}>
          {run.kind === 'python' && <span className="history-kind">py</span>}
          <code>{line || '(empty script)'}</code>
        </a>
        <HostTag id={run.id} />
      </td>
      <td className="history-session" title={run.session}>
        {run.session ?? <span className="muted">–</span>}
      </td>
      <td className="history-status">
        <span className={`badge ${badge.tone}`} data-testid="history-badge" title={badge.title}>
          {badge.label}
        </span>
        {extra.map((b) => (
          <span key={b.label} className={`badge ${b.tone}`} data-testid="history-proc-badge" title={b.title}>
            {b.label}
          </span>
        ))}
      </td>
      <td className="num history-exit" title={run.signal ?? undefined} data-testid="history-exit-cell">
        {exitText(run)}
      </td>
      <td className="num">{run.state === 'ended' ? duration(run.elapsedMs) : run.state === 'queued' ? <span className="muted">–</span> : <LiveElapsed run={run} />}</td>
      <PeakCell run={run} />
    </tr>
  );
});

/** The peak as every view says it: one figure, named in its title for what it is, one decimal in the column. */
function PeakCell({ run }: { run: RunSummary }) {
  const peak = peakFigure({ ...(run.peakRssBytes !== null ? { peak: { rssBytes: run.peakRssBytes, processes: run.peakProcesses ?? 0, ...(run.peakSource ? { source: run.peakSource } : {}) } } : {}), ...(run.oom ? { oom: run.oom } : {}) });
  return (
    <td className="num" data-testid="history-peak" data-source={peak?.source} title={peak ? `${peakName(peak.source)}: ${peakMeaning(peak.source)}` : undefined}>
      {columnBytes(peak?.bytes)}
    </td>
  );
}

/** A live run's elapsed time, moving once a second from the last figure the page got. */
function LiveElapsed({ run }: { run: RunSummary }) {
  const syncedAt = useWarden((s) => s.syncedAt[run.id]);
  // The page's one ticker a second: every live clock changes in the same task.
  const now = useNow(1000);
  return <span className="history-live">{liveDuration(elapsedNow(run, syncedAt, now))}</span>;
}

function NoRuns() {
  return (
    <div className="empty history-empty" data-testid="history-empty">
      <h2>No runs yet</h2>
      <p>Every run Warden supervises lands here, whoever started it. Run a script from a terminal:</p>
      <pre>warden run --limit 30s -- python3 script.py</pre>
      <p>
        or start one from the <a href={hrefOf({ view: 'new' })}>New run</a> form.
      </p>
    </div>
  );
}

function NoMatch({ searching, onClear }: { searching: boolean; onClear: () => void }) {
  return (
    <div className="empty history-empty" data-testid="history-empty">
      <h2>No runs match these filters</h2>
      <p>{searching ? 'Search needs every word to appear; words of three or more letters match by their start.' : 'Try a wider time range, or another verdict, session or exit code.'}</p>
      <button type="button" onClick={onClear} data-testid="history-clear">
        Clear filters
      </button>
    </div>
  );
}
