// A run's stdout or stderr: ANSI colours, virtualised by line (fixed line
// height, no wrapping, horizontal scroll), following the tail while the reader
// is at the bottom, with search.

import { memo, useCallback, useDeferredValue, useEffect, useLayoutEffect, useMemo, useRef, useState, type KeyboardEvent } from 'react';
import type { OutputStream } from '../../../../shared/events';
import type { RunResult } from '../../../../shared/result';
import { styleClass } from './ansi';
import { clipSpans, EMPTY_INDEX, findMatches, indexLines, isDropMarker, lineSpans, markSpans, matchNear, type LineIndex, type Mark, type Match } from './lines';
import { takeStream } from './output-intent';
import { scrollTopFor, visibleRange } from './virtual';
import { useRunOutput } from '../../store';

const LINE_HEIGHT = 20;
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

export function OutputView({ run }: { run: RunResult }) {
  const texts = useRunOutput(run);
  const stdout = useLineIndex(texts.stdout);
  const stderr = useLineIndex(texts.stderr);
  const [chosen, setChosen] = useState<OutputStream | null>(() => takeStream(run.id));
  const stream: OutputStream = chosen ?? (stdout.count === 0 && stderr.count > 0 ? 'stderr' : 'stdout');
  const index = stream === 'stdout' ? stdout : stderr;
  const truncated = stream === 'stdout' ? run.stdoutTruncated : run.stderrTruncated;
  const live = run.state !== 'ended';

  const scroller = useRef<HTMLDivElement>(null);
  const search = useRef<HTMLInputElement>(null);
  const ruler = useRef<HTMLSpanElement>(null);
  const [scrollTop, setScrollTop] = useState(0);
  const [height, setHeight] = useState(400);
  const [follow, setFollow] = useState(true);

  const [query, setQuery] = useState('');
  const deferredQuery = useDeferredValue(query);
  const [current, setCurrent] = useState(-1);
  const result = useMemo(() => findMatches(index, deferredQuery), [index, deferredQuery]);
  const matches = result.matches;
  const active = current >= 0 && current < matches.length ? matches[current]! : null;

  // While following, the view's top is the tail's: known from the line count, so one render draws the
  // right lines (no read of scrollHeight, no second render to catch up).
  const viewTop = follow ? Math.max(0, index.count * LINE_HEIGHT - height) : scrollTop;
  const range = visibleRange({ scrollTop: viewTop, height, count: index.count, lineHeight: LINE_HEIGHT, overscan: OVERSCAN });

  // Track the viewport's height.
  useLayoutEffect(() => {
    const el = scroller.current;
    if (!el) return;
    setHeight(el.clientHeight);
    const observer = new ResizeObserver(() => setHeight(el.clientHeight));
    observer.observe(el);
    return () => observer.disconnect();
  }, []);

  // Follow the tail: new lines keep the view at the bottom while it is there.
  useLayoutEffect(() => {
    const el = scroller.current;
    if (!el || !follow) return;
    // Past the end is clamped by the browser to the bottom.
    el.scrollTop = viewTop + LINE_HEIGHT * 4;
  }, [follow, viewTop, index.version, stream]);

  const onScroll = useCallback(() => {
    const el = scroller.current;
    if (!el) return;
    setScrollTop(el.scrollTop);
    setFollow(el.scrollTop + el.clientHeight >= el.scrollHeight - LINE_HEIGHT / 2);
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
      const top = scrollTopFor(match.line, 0.5, { height: el.clientHeight, count: index.count, lineHeight: LINE_HEIGHT });
      el.scrollTop = top;
      const charWidth = (ruler.current?.getBoundingClientRect().width ?? 800) / 100;
      const gutter = (String(index.count).length + 3) * charWidth;
      const x = gutter + match.start * charWidth;
      if (x < el.scrollLeft + gutter || x + (match.end - match.start) * charWidth > el.scrollLeft + el.clientWidth) {
        el.scrollLeft = Math.max(0, x - el.clientWidth / 3);
      }
      setFollow(false);
      setScrollTop(el.scrollTop);
    },
    [index.count],
  );

  // A new query (or stream) starts at the first match from the top of the view.
  const firstVisible = range.first === 0 ? 0 : range.first + OVERSCAN;
  const firstVisibleRef = useRef(firstVisible);
  firstVisibleRef.current = firstVisible;
  useEffect(() => {
    setCurrent(deferredQuery === '' ? -1 : -2);
  }, [deferredQuery, stream]);
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

  const choose = (next: OutputStream) => {
    setChosen(next);
    setFollow(true);
  };

  const matchText =
    deferredQuery === '' ? '' : matches.length === 0 ? 'no matches' : `${active ? count(current + 1) : '–'} / ${count(matches.length)}${result.capped ? '+' : ''}`;
  const digits = String(Math.max(index.count, 1)).length;
  const widthCh = digits + 3 + Math.min(index.maxLength, LINE_CAP + 40) + 2;

  return (
    <div className="rd-output">
      <div className="rd-output-bar">
        <div className="rd-segmented" role="group" aria-label="Stream">
          {(['stdout', 'stderr'] as const).map((s) => {
            const lines = (s === 'stdout' ? stdout : stderr).count;
            return (
              <button key={s} type="button" aria-pressed={stream === s} className={stream === s ? 'on' : undefined} data-testid={`output-stream-${s}`} onClick={() => choose(s)}>
                {s} <span className="rd-count">{count(lines)}</span>
              </button>
            );
          })}
        </div>
        {truncated > 0 && <span className="rd-warn-text">{count(truncated)} characters dropped by the output cap</span>}
        <span className="rd-spacer" />
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
            <span className="rd-matches" data-testid="output-matches" aria-live="polite">
              {matchText}
            </span>
          </span>
          <button type="button" onClick={() => step(-1)} disabled={matches.length === 0} aria-label="Previous match" title="Previous match (Shift+Enter)">
            ↑
          </button>
          <button type="button" onClick={() => step(1)} disabled={matches.length === 0} aria-label="Next match" title="Next match (Enter)">
            ↓
          </button>
        </div>
      </div>
      <div className={`rd-output-frame${stream === 'stderr' ? ' rd-stderr' : ''}`}>
        <div ref={scroller} className="rd-output-scroll" onScroll={onScroll} data-testid="output-view" data-stream={stream} data-lines={index.count} tabIndex={0}>
          <span ref={ruler} className="rd-ruler" aria-hidden="true">
            {'0'.repeat(100)}
          </span>
          {index.count === 0 ? (
            <div className="rd-output-empty">{live ? `No ${stream} yet.` : `No ${stream}.`}</div>
          ) : (
            <div className="rd-output-content" style={{ height: range.total, minWidth: `${widthCh}ch` }}>
              <div className="rd-output-block" style={{ transform: `translateY(${range.top}px)` }}>
                <Lines index={index} first={range.first} last={range.last} digits={digits} matches={matches} active={active} />
              </div>
            </div>
          )}
        </div>
        {!follow && index.count > 0 && (
          <button type="button" className="rd-follow" onClick={jumpToEnd} data-testid="output-follow">
            {live ? 'Follow output ↓' : 'Jump to end ↓'}
          </button>
        )}
      </div>
    </div>
  );
}

interface LinesProps {
  index: LineIndex;
  first: number;
  last: number;
  digits: number;
  matches: Match[];
  active: Match | null;
}

const Lines = memo(function Lines({ index, first, last, digits, matches, active }: LinesProps) {
  const rows = [];
  let m = matchNear(matches, first);
  if (m >= 0 && matches[m]!.line < first) m = -1;
  for (let i = first; i < last; i++) {
    const ranges: { start: number; end: number; mark: Mark }[] = [];
    while (m >= 0 && m < matches.length && matches[m]!.line === i) {
      const match = matches[m]!;
      ranges.push({ start: match.start, end: match.end, mark: match === active ? 2 : 1 });
      m++;
    }
    const spans = lineSpans(index, i);
    const plain = spans.length === 1 ? spans[0]!.text : null;
    const marker = plain !== null && isDropMarker(plain);
    // Past the cap only when the current match is there.
    const cap = active && active.line === i && active.end > LINE_CAP ? active.end + 200 : LINE_CAP;
    const { spans: shown, omitted } = clipSpans(markSpans(spans, ranges), cap);
    rows.push(
      <div key={i} className={`rd-line${marker ? ' rd-drop' : ''}`} data-testid="output-line" data-line={i + 1}>
        <span className="rd-gutter" style={{ width: `${digits + 3}ch` }} aria-hidden="true">
          {i + 1}
        </span>
        <span className="rd-text">
          {shown.map((s, k) => {
            const cls = [styleClass(s.style), s.mark === 2 ? 'rd-hit rd-hit-current' : s.mark === 1 ? 'rd-hit' : ''].filter(Boolean).join(' ');
            return cls ? (
              <span key={k} className={cls}>
                {s.text}
              </span>
            ) : (
              s.text
            );
          })}
          {omitted > 0 && <span className="rd-omitted"> … {count(omitted)} more characters</span>}
        </span>
      </div>,
    );
  }
  return <>{rows}</>;
});
