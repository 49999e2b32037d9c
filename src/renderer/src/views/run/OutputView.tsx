// A run's output: both streams merged in the order they were written (stderr
// tinted), or one of them; each line with the time it came (relative to the
// start, or the wall clock); ANSI colours, virtualised by line (fixed line
// height, no wrapping, horizontal scroll), following the tail while the reader
// is at the bottom, with search and a download of what is shown.

import { memo, useCallback, useDeferredValue, useEffect, useLayoutEffect, useMemo, useRef, useState, type KeyboardEvent } from 'react';
import { OUTPUT_TIMES_EVENT, readLineTotals, readMarks, type OutputMark } from '../../../../shared/output-times';
import type { RunResult } from '../../../../shared/result';
import { ansiPiece } from './AnsiText';
import { clipSpans, EMPTY_INDEX, findMatches, indexLines, isDropMarker, lineSpans, markSpans, matchNear, rawLine, type LineIndex, type Mark, type Match } from './lines';
import { blankBeforeCut, buildRows, cutOf, markerLineOf, rowMatches, rowsText, streamLineNumber, type LogMode, type LogRows } from './log-rows';
import { hrefOf, navigate, type LineRange } from '../../router';
import { takeStream } from './output-intent';
import { scrollTopFor, visibleRange } from './virtual';
import { useVirtualizer } from '@tanstack/react-virtual';
import { useWarden } from '../../store';
import { useShownOutput } from './shown-output';
import { pagesProgress, viewText } from '../../output-pages';
import { useCrash } from './crash';
import { crashMark } from './summary';

type TimeMode = 'off' | 'relative' | 'clock';
const TIME_LABEL: Record<TimeMode, string> = { off: 'Time: off', relative: 'Time: since start', clock: 'Time: clock' };
const NEXT_TIME: Record<TimeMode, TimeMode> = { off: 'relative', relative: 'clock', clock: 'off' };
const CLOCK = new Intl.DateTimeFormat(undefined, { hour: '2-digit', minute: '2-digit', second: '2-digit', fractionalSecondDigits: 3, hour12: false });

/** When the run's output came: the page's live marks (as drawn: shown-output.ts), or for an ended run the history's (with each stream's total lines). */
function useMarks(run: RunResult, live: { list: OutputMark[]; version: number } | undefined): { marks: OutputMark[] | null; totals: [number, number] | null } {
  const api = useWarden((s) => s.api);
  const ended = run.state === 'ended';
  const [stored, setStored] = useState<OutputMark[] | null | undefined>(undefined);
  const [storedTotals, setStoredTotals] = useState<[number, number] | null>(null);
  useEffect(() => {
    if (!ended || !api) return undefined;
    let current = true;
    api.timeline(run.id).then(
      (events) => {
        if (!current) return;
        const record = events.find((e) => e.kind === OUTPUT_TIMES_EVENT);
        setStored(record ? readMarks(record.detail) : null);
        setStoredTotals(record ? readLineTotals(record.detail) : null);
      },
      // Without the history's times the log is still shown, untimed.
      () => current && setStored(null),
    );
    return () => {
      current = false;
    };
  }, [api, run.id, ended]);
  // Re-read when a mark is added (the list grows in place).
  const version = live?.version ?? 0;
  const marks = useMemo(() => stored || (live ? live.list.slice() : null), [stored, live, version]);
  return { marks, totals: storedTotals };
}

const LINE_HEIGHT = 20;
const NO_TEXTS = { stdout: '', stderr: '' };
const OVERSCAN = 20;
/** Characters of one line rendered; a longer line ends with a count of the rest. */
const LINE_CAP = 5_000;

function useLineIndex(text: string): LineIndex {
  const ref = useRef(EMPTY_INDEX);
  return useMemo(() => (ref.current = indexLines(ref.current, text)), [text]);
}

// One formatter for every call: toLocaleString builds a new one each time, which shows in profiles.
const NUMBER = new Intl.NumberFormat('en-US');
const count = (n: number) => NUMBER.format(n);
/** Characters as megabytes, one decimal (the output is mostly one byte a character). */
const mbOf = (chars: number) => `${(chars / 1e6).toFixed(1)} MB`;

export function OutputView({ run, lines: linked }: { run: RunResult; lines?: LineRange }) {
  // Drawn at most a few times a second while lines arrive (shown-output.ts): following a log stays cheap.
  const shown = useShownOutput(run);
  // An ended run's output still coming in pages (output-pages.ts): what each stream lacks is not yet known. Shown in whole
  // lines only, and a linked line's page ahead of the rest at its own line, the lines before it pending (viewText).
  const paged = shown.paged;
  const outView = useMemo(() => (paged ? viewText(paged, 'stdout') : null), [paged]);
  const errView = useMemo(() => (paged ? viewText(paged, 'stderr') : null), [paged]);
  const texts = useMemo(
    () => (outView && errView ? { stdout: outView.text, stderr: errView.text } : shown.texts),
    [outView?.text, errView?.text, shown.texts],
  );
  const pending = outView?.pending ?? errView?.pending ?? null;
  const complete: [boolean, boolean] = paged ? [paged.stdout.length >= paged.stdoutTotal, paged.stderr.length >= paged.stderrTotal] : [true, true];
  const loading = paged ? pagesProgress(paged) : null;
  const stdout = useLineIndex(texts.stdout);
  const stderr = useLineIndex(texts.stderr);
  const { marks: knownMarks, totals: storedTotals } = useMarks(run, shown.marks);
  // While lines are pending, the shown text's offsets are not the stream's: its times wait for the whole.
  const marks = pending ? null : knownMarks;
  // The crash report that ends the output: its error line and the user's innermost frame are marked, as in the Summary.
  const report = useCrash(run, complete[0] && complete[1] ? texts : NO_TEXTS);
  const pendingAt = useCallback((s: 0 | 1, line: number) => pending !== null && pending.stream === (s === 0 ? 'stdout' : 'stderr') && line >= pending.from && line < pending.to, [pending]);
  const crashAt = useCallback(
    (s: 0 | 1, line: number): 'error' | 'frame' | null => {
      if (!report || report.stream !== (s === 0 ? 'stdout' : 'stderr')) return null;
      const mark = crashMark(report.traceback, line + 1);
      return mark === 'error' || mark === 'frame' ? mark : null;
    },
    [report],
  );
  const [mode, setMode] = useState<LogMode>(() => takeStream(run.id) ?? linked?.stream ?? 'all');
  const [caseSensitive, setCaseSensitive] = useState(false);
  const [regex, setRegex] = useState(false);
  const [timeMode, setTimeMode] = useState<TimeMode>('off');
  const [wrap, setWrap] = useState(false);
  const stream = mode;
  const rows = useMemo(
    () => buildRows(mode, [stdout, stderr], [cutOf(texts.stdout), cutOf(texts.stderr)], marks, complete),
    // The texts change exactly when their indexes do (and a stream is complete once its text stops changing).
    [mode, stdout, stderr, marks, complete[0], complete[1]],
  );
  const indexes = useMemo(() => [stdout, stderr] as const, [stdout, stderr]);
  const truncated = mode === 'stdout' ? run.stdoutTruncated : mode === 'stderr' ? run.stderrTruncated : run.stdoutTruncated + run.stderrTruncated;
  // While live the page keeps at most its own cap: what it leaves out is said, and the line counts never go down.
  const liveCuts = run.state === 'ended' ? 0 : (mode !== 'stderr' ? (cutOf(texts.stdout)?.dropped ?? 0) : 0) + (mode !== 'stdout' ? (cutOf(texts.stderr)?.dropped ?? 0) : 0);
  const seen = { stdout: Math.max(stdout.count, texts.stdoutLines ?? storedTotals?.[0] ?? 0), stderr: Math.max(stderr.count, texts.stderrLines ?? storedTotals?.[1] ?? 0) };
  // One stream shown: its lines numbered as they were in the stream, past a cut too (the total counts the dropped ones).
  const numberOf = useMemo(() => {
    if (mode === 'all') return (row: number) => String(row + 1);
    const s = mode === 'stdout' ? 0 : 1;
    const index = s === 0 ? stdout : stderr;
    const text = s === 0 ? texts.stdout : texts.stderr;
    const cut = cutOf(text);
    const marker = markerLineOf(index, cut);
    // Lines past a cut are numbered from the stream's end: not before the kept text is all here.
    const total = !complete[s] ? null : texts.stdoutLines !== undefined ? (s === 0 ? texts.stdoutLines : texts.stderrLines!) : (storedTotals?.[s] ?? null);
    const blank = blankBeforeCut(text, cut);
    return (row: number) => {
      const n = streamLineNumber(row, index.count, marker, total, blank);
      return n === null ? '⋯' : String(n);
    };
  }, [mode, stdout, stderr, texts.stdoutLines, texts.stderrLines, storedTotals, complete[0], complete[1]]);
  const live = run.state !== 'ended';
  const startedWall = Date.parse(run.startedAt);

  const scroller = useRef<HTMLDivElement>(null);
  const search = useRef<HTMLInputElement>(null);
  const ruler = useRef<HTMLSpanElement>(null);
  const [scrollTop, setScrollTop] = useState(0);
  const [height, setHeight] = useState(400);
  const [follow, setFollow] = useState(true);

  const [query, setQuery] = useState('');
  const deferredQuery = useDeferredValue(query);
  const [current, setCurrent] = useState(-1);
  const result = useMemo(() => {
    const options = { caseSensitive, regex };
    const out = findMatches(stdout, deferredQuery, undefined, options);
    const err = findMatches(stderr, deferredQuery, undefined, options);
    return { matches: rowMatches(rows, [out.matches, err.matches]), capped: out.capped || err.capped, error: out.error ?? err.error };
  }, [stdout, stderr, rows, deferredQuery, caseSensitive, regex]);
  const matches = result.matches;
  const active = current >= 0 && current < matches.length ? matches[current]! : null;

  // While following, the view's top is the tail's: known from the line count, so one render draws the
  // right lines (no read of scrollHeight, no second render to catch up).
  const viewTop = follow ? Math.max(0, rows.count * LINE_HEIGHT - height) : scrollTop;
  const range = visibleRange({ scrollTop: viewTop, height, count: rows.count, lineHeight: LINE_HEIGHT, overscan: OVERSCAN });

  // Track the viewport's height.
  useLayoutEffect(() => {
    const el = scroller.current;
    if (!el) return;
    setHeight(el.clientHeight);
    const observer = new ResizeObserver(() => setHeight(el.clientHeight));
    observer.observe(el);
    return () => observer.disconnect();
  }, []);

  // Wrapped lines have heights of their own: measured rows (@tanstack/react-virtual). Unwrapped, every row
  // is one line high and virtual.ts places them for any length (see there why not the library for that).
  const wrapped = useVirtualizer({ count: rows.count, getScrollElement: () => scroller.current, estimateSize: () => LINE_HEIGHT, overscan: 12, enabled: wrap });

  // Follow the tail: new lines keep the view at the bottom while it is there.
  useLayoutEffect(() => {
    const el = scroller.current;
    if (!el || !follow) return;
    if (wrap) {
      if (rows.count > 0) wrapped.scrollToIndex(rows.count - 1, { align: 'end' });
      return;
    }
    // Past the end is clamped by the browser to the bottom; the scroll event this makes is ours (onScroll).
    const before = el.scrollTop;
    el.scrollTop = viewTop + LINE_HEIGHT * 4;
    if (el.scrollTop !== before) ownScroll.current = el.scrollTop;
  }, [follow, viewTop, rows, stream, wrap]);

  // The scroll the follow effect made itself: its event changes nothing (state set again would draw the log twice).
  const ownScroll = useRef<number | null>(null);
  const onScroll = useCallback(() => {
    const el = scroller.current;
    if (!el) return;
    const top = el.scrollTop;
    if (ownScroll.current !== null && Math.abs(top - ownScroll.current) < 1) {
      ownScroll.current = null;
      return;
    }
    ownScroll.current = null;
    setScrollTop(top);
    setFollow(top + el.clientHeight >= el.scrollHeight - LINE_HEIGHT / 2);
  }, []);

  const jumpToEnd = () => {
    const el = scroller.current;
    if (el) el.scrollTop = el.scrollHeight;
    setFollow(true);
  };

  const reveal = useCallback(
    (match: Match) => {
      const el = scroller.current;
      if (!el) return;
      if (wrap) {
        setFollow(false);
        wrapped.scrollToIndex(match.line, { align: 'center' });
        return;
      }
      const top = scrollTopFor(match.line, 0.5, { height: el.clientHeight, count: rows.count, lineHeight: LINE_HEIGHT });
      el.scrollTop = top;
      const charWidth = (ruler.current?.getBoundingClientRect().width ?? 800) / 100;
      const gutter = (String(rows.count).length + 3 + (timeMode === 'off' ? 0 : 14)) * charWidth;
      const x = gutter + match.start * charWidth;
      if (x < el.scrollLeft + gutter || x + (match.end - match.start) * charWidth > el.scrollLeft + el.clientWidth) {
        el.scrollLeft = Math.max(0, x - el.clientWidth / 3);
      }
      setFollow(false);
      setScrollTop(el.scrollTop);
    },
    [rows.count, timeMode, wrap, wrapped],
  );

  // A new query (or stream) starts at the first match from the top of the view.
  const firstVisible = range.first === 0 ? 0 : range.first + OVERSCAN;
  const firstVisibleRef = useRef(firstVisible);
  firstVisibleRef.current = firstVisible;
  useEffect(() => {
    setCurrent(deferredQuery === '' ? -1 : -2);
  }, [deferredQuery, stream, caseSensitive, regex]);
  // Nothing found in what had come, then a match in a page that came since: shown as a new query's first is.
  const hadMatches = useRef(false);
  useEffect(() => {
    if (matches.length > 0 && !hadMatches.current && current === -1 && deferredQuery !== '') setCurrent(-2);
    hadMatches.current = matches.length > 0;
  }, [matches.length]);

  // A link to lines (#/runs/ID/output/L120-L140) opens scrolled to them, once the output is there.
  const linkedHere = linked && linked.stream === mode ? linked : undefined;
  const scrolledFor = useRef<string | null>(null);
  const ownClick = useRef(false);
  useLayoutEffect(() => {
    const el = scroller.current;
    if (!linkedHere || !el || rows.count < linkedHere.from) return;
    const key = `${linkedHere.stream}:${linkedHere.from}-${linkedHere.to}`;
    if (scrolledFor.current === key) return;
    scrolledFor.current = key;
    if (ownClick.current) {
      // The reader clicked a line number: the link changed, the view stays where it is.
      ownClick.current = false;
      setFollow(false);
      return;
    }
    setFollow(false);
    if (wrap) {
      wrapped.scrollToIndex(linkedHere.from - 1, { align: 'center' });
      return;
    }
    el.scrollTop = scrollTopFor(linkedHere.from - 1, 0.3, { height: el.clientHeight, count: rows.count, lineHeight: LINE_HEIGHT });
    setScrollTop(el.scrollTop);
  }, [linkedHere, rows.count]);
  const lineHref = useCallback((row: number) => hrefOf({ view: 'run', id: run.id, tab: 'output', lines: { stream: mode, from: row + 1, to: row + 1 } }), [run.id, mode]);
  const linkTo = useCallback(
    (row: number, extend: boolean) => {
      ownClick.current = true;
      const from = extend && linkedHere ? linkedHere.from : row;
      navigate({ view: 'run', id: run.id, tab: 'output', lines: { stream: mode, from: Math.min(from, row), to: Math.max(from, row) } });
    },
    [linkedHere, mode, run.id],
  );
  useEffect(() => {
    if (current !== -2 || deferredQuery === '') return;
    const at = matchNear(matches, firstVisibleRef.current);
    setCurrent(at);
    if (at >= 0) reveal(matches[at]!);
  }, [current, matches, deferredQuery, reveal]);

  const step = (by: 1 | -1) => {
    if (matches.length === 0) return;
    const from = current < 0 ? (by === 1 ? -1 : 0) : current;
    const next = (from + by + matches.length) % matches.length;
    setCurrent(next);
    reveal(matches[next]!);
  };

  const onSearchKey = (event: KeyboardEvent<HTMLInputElement>) => {
    if (event.key === 'Enter') {
      event.preventDefault();
      step(event.shiftKey ? -1 : 1);
    } else if (event.key === 'Escape') {
      setQuery('');
    }
  };

  // Ctrl/Cmd+F searches the output.
  useEffect(() => {
    const onKey = (event: globalThis.KeyboardEvent) => {
      if ((event.ctrlKey || event.metaKey) && event.key.toLowerCase() === 'f') {
        event.preventDefault();
        search.current?.focus();
        search.current?.select();
      }
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, []);

  const choose = (next: LogMode) => {
    setMode(next);
    setFollow(true);
  };

  // Download gives the whole output: offered once every page is here.
  const download = () => {
    const text = rowsText(rows, (s, line) => rawLine(indexes[s], line));
    const url = URL.createObjectURL(new Blob([text], { type: 'text/plain;charset=utf-8' }));
    const a = document.createElement('a');
    a.href = url;
    a.download = `warden-${run.id}-${mode === 'all' ? 'output' : mode}.log`;
    document.body.appendChild(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(url), 10_000);
  };
  const timeText = (atMs: number | null): string => {
    if (atMs === null) return '';
    if (timeMode === 'relative') return `+${(atMs / 1000).toFixed(3)}`;
    return Number.isFinite(startedWall) ? CLOCK.format(new Date(startedWall + atMs)) : '';
  };

  // While pages are still coming, what was searched is said: the rest is searched as it comes.
  const soFar = loading ? ' so far' : '';
  const matchText =
    deferredQuery === '' ? '' : result.error ? 'bad pattern' : matches.length === 0 ? `no matches${soFar}` : `${active ? count(current + 1) : '–'} / ${count(matches.length)}${result.capped ? '+' : ''}${soFar}`;
  const digits = String(Math.max(rows.count, seen.stdout, seen.stderr, 1)).length;
  const lineProps: LinesProps = {
    rows,
    indexes,
    first: 0,
    last: 0,
    digits,
    matches,
    active,
    tint: mode === 'all',
    timeText: timeMode === 'off' ? null : timeText,
    linked: linkedHere,
    onLink: linkTo,
    hrefOf: lineHref,
    numberOf,
    crashAt,
    pendingAt,
  };
  const timeCh = timeMode === 'off' ? 0 : 14;
  const widthCh = digits + 3 + timeCh + Math.min(Math.max(stdout.maxLength, stderr.maxLength), LINE_CAP + 40) + 2;

  return (
    <div className="rd-output">
      <div className="rd-output-bar">
        <div className="rd-segmented" role="group" aria-label="Stream">
          {(['all', 'stdout', 'stderr'] as const).map((s) => {
            const lines = s === 'all' ? seen.stdout + seen.stderr : seen[s];
            return (
              <button key={s} type="button" aria-pressed={stream === s} className={stream === s ? 'on' : undefined} data-testid={`output-stream-${s}`} onClick={() => choose(s)}>
                {s === 'all' ? 'all' : s} <span className="rd-count">{count(lines)}</span>
              </button>
            );
          })}
        </div>
        <button
          type="button"
          className={timeMode === 'off' ? undefined : 'on'}
          onClick={() => setTimeMode((t) => NEXT_TIME[t])}
          disabled={!marks}
          title={marks ? 'Show when each line came: since the start, or by the clock' : 'This run’s output times were not recorded'}
          data-testid="output-time"
          data-mode={timeMode}
        >
          {TIME_LABEL[timeMode]}
        </button>
        {truncated > 0 && <span className="rd-warn-text">{count(truncated)} characters dropped by the output cap</span>}
        {liveCuts > 0 && (
          <span className="rd-warn-text" data-testid="output-live-dropped" title="The host keeps the run's output (head and tail up to its cap); the whole kept output shows when the run ends">
            {count(liveCuts)} characters not shown while live
          </span>
        )}
        {mode === 'all' && !marks && !live && stdout.count > 0 && stderr.count > 0 && (
          <span className="muted" title="Runs recorded before Warden kept output times show stdout, then stderr">
            stdout, then stderr (not timed)
          </span>
        )}
        {mode === 'all' && marks && stdout.count > 0 && stderr.count > 0 && (
          <span
            className="muted"
            data-testid="output-order-note"
            title="stdout and stderr come through two pipes, each read as it arrives: lines of the two written within the same moment may show in another order than written. For one exact order, run the command with 2>&1 (one stream)."
          >
            order between streams: by arrival
          </span>
        )}
        <button
          type="button"
          className={wrap ? 'on' : undefined}
          aria-pressed={wrap}
          onClick={() => {
            setWrap((w) => !w);
            setFollow(true);
          }}
          title="Wrap long lines instead of scrolling sideways"
          data-testid="output-wrap"
        >
          Wrap
        </button>
        <span className="rd-spacer" />
        <button type="button" onClick={download} disabled={rows.count === 0 || loading !== null} data-testid="output-download" title={loading ? 'Download is offered once all of the output is here' : 'Download the output shown, as text'}>
          Download
        </button>
        <div className="rd-search">
          <span className="rd-search-field">
            <input
              ref={search}
              type="text"
              placeholder="Search output"
              aria-label="Search output"
              value={query}
              onChange={(e) => setQuery(e.target.value)}
              onKeyDown={onSearchKey}
              data-testid="output-search"
            />
            <span className="rd-matches" data-testid="output-matches" aria-live="polite" title={result.error ?? (loading ? `Searched the ${mbOf(loading.held)} of ${mbOf(loading.total)} that has come; the rest is searched as it comes` : undefined)}>
              {matchText}
            </span>
          </span>
          <button type="button" className={caseSensitive ? 'on' : undefined} aria-pressed={caseSensitive} onClick={() => setCaseSensitive((v) => !v)} title="Match case" data-testid="output-search-case">
            Aa
          </button>
          <button type="button" className={regex ? 'on' : undefined} aria-pressed={regex} onClick={() => setRegex((v) => !v)} title="Regular expression" data-testid="output-search-regex">
            .*
          </button>
          <button type="button" onClick={() => step(-1)} disabled={matches.length === 0} aria-label="Previous match" title="Previous match (Shift+Enter)">
            ↑
          </button>
          <button type="button" onClick={() => step(1)} disabled={matches.length === 0} aria-label="Next match" title="Next match (Enter)">
            ↓
          </button>
        </div>
      </div>
      <div className={`rd-output-frame${stream === 'stderr' ? ' rd-stderr' : ''}`}>
        <div
          ref={scroller}
          className={`rd-output-scroll${wrap ? ' wrapped' : ''}`}
          onScroll={onScroll}
          data-testid="output-view"
          data-stream={stream}
          data-lines={rows.count}
          data-timed={marks ? 'true' : 'false'}
          data-wrap={wrap ? 'true' : 'false'}
          tabIndex={0}
        >
          <span ref={ruler} className="rd-ruler" aria-hidden="true">
            {'0'.repeat(100)}
          </span>
          {rows.count === 0 ? (
            <div className="rd-output-empty">{live ? `No ${stream === 'all' ? 'output' : stream} yet.` : `No ${stream === 'all' ? 'output' : stream}.`}</div>
          ) : wrap ? (
            <div className="rd-output-content" style={{ height: wrapped.getTotalSize() }}>
              {wrapped.getVirtualItems().map((item) => lineRow(lineProps, item.index, { ref: wrapped.measureElement, top: item.start }))}
            </div>
          ) : (
            <div className="rd-output-content" style={{ height: range.total, minWidth: `${widthCh}ch` }}>
              <div className="rd-output-block" style={{ transform: `translateY(${range.top}px)` }}>
                <Lines {...lineProps} first={range.first} last={range.last} />
              </div>
            </div>
          )}
        </div>
        {/* Over the log, not in the bar: its coming and going must not move the lines (a bar that wraps would). */}
        {loading && paged && (
          <span className={`rd-output-loading${paged.error ? ' rd-warn-text' : ' muted'}`} data-testid="output-loading" role="status" title={paged.error ?? 'The output comes in pages: what has come is shown and searched, the rest follows'}>
            {paged.error ? `loading stopped at ${mbOf(loading.held)} of ${mbOf(loading.total)}: ${paged.error}` : `loading ${mbOf(loading.held)} of ${mbOf(loading.total)}`}
          </span>
        )}
        {!follow && rows.count > 0 && (
          <button type="button" className="rd-follow" onClick={jumpToEnd} data-testid="output-follow">
            {live ? 'Follow output ↓' : 'Jump to end ↓'}
          </button>
        )}
      </div>
    </div>
  );
}

interface LinesProps {
  rows: LogRows;
  indexes: readonly [LineIndex, LineIndex];
  /** Tint stderr lines (both streams shown). */
  tint: boolean;
  /** The time column's text for a row's time, or null without one. */
  timeText: ((atMs: number | null) => string) | null;
  /** The lines a link points at, highlighted. */
  linked: LineRange | undefined;
  onLink: (row: number, extend: boolean) => void;
  hrefOf: (row: number) => string;
  /** The number a row's gutter shows. */
  numberOf: (row: number) => string;
  /** A line of a stream that is the crash report's error, or the user's innermost frame. */
  crashAt: (stream: 0 | 1, line: number) => 'error' | 'frame' | null;
  /** A line still to come (a linked page came ahead of the pages before it). */
  pendingAt: (stream: 0 | 1, line: number) => boolean;
  first: number;
  last: number;
  digits: number;
  matches: Match[];
  active: Match | null;
}

const Lines = memo(function Lines(props: LinesProps) {
  const out = [];
  for (let i = props.first; i < props.last; i++) out.push(lineRow(props, i));
  return <>{out}</>;
});

/** The matches on row `i`, as marks for its spans. */
function rowRanges(matches: Match[], active: Match | null, i: number): { start: number; end: number; mark: Mark }[] {
  const ranges: { start: number; end: number; mark: Mark }[] = [];
  let m = matchNear(matches, i);
  if (m < 0 || matches[m]!.line !== i) return ranges;
  while (m < matches.length && matches[m]!.line === i) {
    const match = matches[m]!;
    ranges.push({ start: match.start, end: match.end, mark: match === active ? 2 : 1 });
    m++;
  }
  return ranges;
}

/** One row of the log, in either layout. `extra`: the wrapped layout's measuring ref and position. */
function lineRow({ rows, indexes, tint, timeText, linked, onLink, hrefOf: linkOf, numberOf, crashAt, pendingAt, digits, matches, active }: LinesProps, i: number, extra?: { ref: (el: Element | null) => void; top: number }) {
  if (pendingAt(rows.stream(i), rows.line(i))) {
    return (
      <div key={i} ref={extra?.ref} data-index={extra ? i : undefined} style={extra ? { transform: `translateY(${extra.top}px)` } : undefined} className="rd-line rd-line-pending" data-testid="output-line-pending" data-line={i + 1}>
        <span className="rd-gutter" style={{ width: `${digits + 3}ch` }}>
          {numberOf(i)}
        </span>
        <span className="rd-text">⋯</span>
      </div>
    );
  }
  const ranges = rowRanges(matches, active, i);
  const s = rows.stream(i);
  const index = indexes[s];
  const spans = lineSpans(index, rows.line(i));
  const plain = spans.length === 1 ? spans[0]!.text : null;
  const marker = plain !== null && isDropMarker(plain);
  // Past the cap only when the current match is there.
  const cap = active && active.line === i && active.end > LINE_CAP ? active.end + 200 : LINE_CAP;
  const { spans: shown, omitted } = clipSpans(markSpans(spans, ranges), cap);
  const isLinked = linked !== undefined && i + 1 >= linked.from && i + 1 <= linked.to;
  const approximate = rows.approximate(i);
  const crash = crashAt(s, rows.line(i));
  return (
    <div
      key={i}
      ref={extra?.ref}
      data-index={extra ? i : undefined}
      style={extra ? { transform: `translateY(${extra.top}px)` } : undefined}
      className={`rd-line${marker ? ' rd-drop' : ''}${tint && s === 1 ? ' rd-line-stderr' : ''}${isLinked ? ' rd-line-linked' : ''}${crash ? ` rd-line-crash-${crash}` : ''}`}
      data-testid="output-line"
      data-line={i + 1}
      data-stream={s === 0 ? 'stdout' : 'stderr'}
      data-linked={isLinked ? 'true' : undefined}
      data-order={approximate ? 'approximate' : undefined}
      data-crash={crash ?? undefined}
    >
      <a
        className="rd-gutter"
        style={{ width: `${digits + 3}ch` }}
        href={linkOf(i)}
        onClick={(e) => {
          e.preventDefault();
          onLink(i + 1, e.shiftKey);
        }}
        title="Link to this line (Shift: to the lines from the linked one)"
        data-testid="output-line-link"
        tabIndex={-1}
      >
        {approximate && (
          <span
            className="rd-order-approx"
            data-testid="output-order-approx"
            title="This line and the one above came through the two pipes (stdout, stderr) within 0.1 s of each other: which was written first cannot be told, so their order here is approximate. For one exact order, run the command with 2>&1."
          >
            ≈
          </span>
        )}
        {numberOf(i)}
      </a>
      {timeText && (
        <span className="rd-time" data-testid="output-line-time">
          {timeText(rows.atMs(i))}
        </span>
      )}
      <span className="rd-text">
        {shown.map((sp, k) => ansiPiece(k, sp.text, sp.style, sp.mark === 2 ? 'rd-hit rd-hit-current' : sp.mark === 1 ? 'rd-hit' : ''))}
        {omitted > 0 && <span className="rd-omitted"> … {count(omitted)} more characters</span>}
      </span>
    </div>
  );
}
