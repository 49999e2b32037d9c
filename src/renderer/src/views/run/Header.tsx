// The run detail's header: what runs, its badge, elapsed against the limit,
// the stop phase, and the actions (stop, force kill, wait, extend, copy, re-run).

import { useEffect, useRef, useState, type FormEvent } from 'react';
import { parseDuration } from '../../../../shared/duration';
import type { RunResult, SignalSent } from '../../../../shared/result';
import { ago, bytes, clock, commandLine, duration, fullTime, liveDuration, memoryLimitOf, peakFigure, peakMeaning, peakName } from '../../format';
import { escapedIn, processBadges, statusBadge } from '../runs/model';
import { hrefOf, navigate } from '../../router';
import { liveElapsed, messageOf, useWarden } from '../../store';
import { copyText, phaseText, rerunRequest } from './describe';
import { useNow, useWallClock } from '../../components/hooks';
import { useLivePhase } from '../../components/live-phase';
import { ServiceBar } from './ServiceBar';

const NO_SIGNALS: SignalSent[] = [];

export function Header({ run }: { run: RunResult }) {
  const live = run.state !== 'ended';
  const keep = useLiveHeight(live);
  return (
    <header className="rd-header" ref={keep.ref} style={keep.style}>
      <div className="rd-title-row">
        <RunBadges run={run} />
        <h1 className="rd-title" data-testid="run-title" title={run.code ?? commandLine(run)}>
          {commandLine(run) || '(empty script)'}
        </h1>
        {run.code !== undefined && <ScriptLines id={run.id} code={run.code} />}
        <CopyButton run={run} />
        <RerunButton run={run} />
      </div>
      <div className="rd-meta">
        {run.kind === 'python' ? (
          <span>
            session <strong>{run.session ?? 'default'}</strong>
            {run.state === 'queued' && run.queuePosition ? ` · queued, position ${run.queuePosition}` : ''}
          </span>
        ) : (
          <span className="rd-cwd" title={run.cwd}>
            in <code>{run.cwd}</code>
          </span>
        )}
        <span>started {clock(run.startedAt)}</span>
        <span className="muted mono rd-id">{run.id}</span>
      </div>
      <div className="rd-status-row">
        <Clock run={run} />
        <Phase run={run} />
        <Resources run={run} />
        {/* A live run's actions at the row's end: the row keeps its height when they go at the end, so the log below does not move. */}
        <Actions run={run} live={live} />
      </div>
      <ServiceBar run={run} />
    </header>
  );
}

/**
 * A header shown live keeps its live height once the run ends (its actions
 * go, and a row they wrapped onto with them), so the tabs and the log below
 * do not move under a reader. Measured by a ResizeObserver (after layout, no
 * layout of its own); the header is keyed by run, so another run starts
 * afresh.
 */
function useLiveHeight(live: boolean): { ref: React.RefObject<HTMLElement | null>; style: React.CSSProperties | undefined } {
  const ref = useRef<HTMLElement>(null);
  const [height, setHeight] = useState<number | null>(null);
  const liveNow = useRef(live);
  liveNow.current = live;
  useEffect(() => {
    const el = ref.current;
    if (!el || !liveNow.current) return undefined;
    const observer = new ResizeObserver((entries) => {
      if (!liveNow.current) return;
      const box = entries[0]?.borderBoxSize?.[0]?.blockSize ?? el.offsetHeight;
      setHeight(Math.round(box));
    });
    observer.observe(el);
    return () => observer.disconnect();
  }, []);
  return { ref, style: !live && height !== null ? { minHeight: height } : undefined };
}

/** The same verdict words and badges as Runs and History: an out-of-memory kill, escaped or left-behind processes. */
function RunBadges({ run }: { run: RunResult }) {
  const live = run.state !== 'ended';
  const escaped = useWarden((s) => (live ? escapedIn(s.trees[run.id]) : 0));
  const badge = statusBadge(run);
  return (
    <>
      <span className={`badge ${badge.tone}`} data-testid="run-badge" title={badge.title}>
        {badge.label}
      </span>
      {processBadges(run, escaped).map((b) => (
        <span key={b.label} className={`badge ${b.tone}`} data-testid="run-proc-badge" title={b.title}>
          {b.label}
        </span>
      ))}
    </>
  );
}

/**
 * A live run's memory now (its processes' RSS sum, so labelled) and its peak
 * so far against its limit, and its CPU, from the latest sample; an ended
 * one's peak against its limit. The peak is the one figure every view shows,
 * named for what it is.
 */
function Resources({ run }: { run: RunResult }) {
  const live = run.state !== 'ended';
  // The latest sample, read on the page's one-second tick (two samples a second would lay the page out twice more).
  useNow(live ? 1000 : null);
  const sample = live ? useWarden.getState().trees[run.id] : undefined;
  const rss = sample?.rssBytes;
  const cpu = sample?.cpuPercent;
  const treePeak = sample?.peak;
  const limit = memoryLimitOf(run);
  const peak = peakFigure(run, treePeak && rss !== undefined ? { peak: treePeak, rssBytes: rss } : undefined);
  if (live && rss === undefined && limit === undefined) return null;
  if (!live && limit === undefined) return null;
  return (
    <span className="rd-resources muted" data-testid="run-resources">
      {live && rss !== undefined && (
        <span title="The sum of its processes' RSS at the latest sample">
          RSS sum <strong data-testid="run-rss">{bytes(rss)}</strong>
          {' · '}
        </span>
      )}
      {peak && (
        <span title={peakMeaning(peak.source)} data-testid="run-peak-head" data-source={peak.source}>
          {peakName(peak.source)}
          {live ? ' so far' : ''} <strong>{bytes(peak.bytes)}</strong>
        </span>
      )}
      {limit !== undefined && <span data-testid="run-memory-limit-head"> of {bytes(limit)} limit</span>}
      {live && cpu !== undefined && <span> · CPU {Math.round(cpu)} %</span>}
    </span>
  );
}

function ScriptLines({ id, code }: { id: string; code: string }) {
  const lines = code.replace(/\n$/, '').split('\n').length;
  if (lines <= 1) return null;
  return (
    <a className="muted rd-script-lines" href={hrefOf({ view: 'run', id, tab: 'script' })} title="Show the whole script">
      {lines} lines
    </a>
  );
}

/**
 * Elapsed against the limit, live, with a bar when there is a limit; once
 * ended, what it took and when it ended ("took 0.54 s · limit 30 s · ended 3 min ago").
 */
function Clock({ run }: { run: RunResult }) {
  const syncedAt = useWarden((s) => s.syncedAt[run.id]);
  const live = run.state === 'running' || run.state === 'stopping';
  const ended = run.state === 'ended';
  // Once a second, as every clock of the page (the shared ticker: one layout for all of them); whole seconds while live.
  const now = useNow(live ? 1000 : null);
  const wall = useWallClock(ended ? 15_000 : null);
  const elapsed = run.state === 'queued' ? 0 : liveElapsed(run, syncedAt, now);
  const fraction = run.limitMs ? Math.min(1, elapsed / run.limitMs) : 0;
  const over = run.limitMs !== null && elapsed >= run.limitMs;
  const limit = (
    <span data-testid="run-limit" className={run.limitMs === null ? 'muted' : 'mono'}>
      {run.limitMs === null ? 'no limit' : duration(run.limitMs)}
    </span>
  );
  return (
    <div className="rd-clock">
      <span className="rd-clock-text" data-testid="run-clock">
        {ended && <span className="muted">took </span>}
        <span data-testid="run-elapsed" className="mono">
          {live ? liveDuration(elapsed) : duration(elapsed)}
        </span>
        {run.limitMs === null ? <span className="muted"> · </span> : <span className="muted">{ended ? ' · limit ' : ' of '}</span>}
        {limit}
        {ended && run.endedAt && (
          <span className="muted" data-testid="run-ended-ago" title={fullTime(run.endedAt)}>
            {' '}
            · ended {ago(run.endedAt, wall)}
          </span>
        )}
      </span>
      {run.limitMs !== null && (
        <span className={`rd-bar${over ? ' over' : ''}${live ? ' live' : ''}`} aria-hidden="true">
          <span style={{ width: `${(fraction * 100).toFixed(2)}%` }} />
        </span>
      )}
    </div>
  );
}

/** Where the stop sequence stands, in the Runs list's words while live; how it ended once over. */
function Phase({ run }: { run: RunResult }) {
  const progress = useWarden((s) => s.stopProgress[run.id]);
  const stopping = run.state === 'stopping' || (run.state !== 'ended' && progress !== undefined);
  const now = useNow(stopping ? 1000 : null);
  const { view } = useLivePhase(run, now);
  const text = run.state === 'ended' ? phaseText(run, undefined, NO_SIGNALS, run.elapsedMs) : stopping ? view.label : null;
  if (!text) return null;
  return (
    <span className={`rd-phase${stopping ? ' active' : ''}`} data-testid="run-phase" data-phase={run.state === 'ended' ? 'ended' : view.phase}>
      {text}
    </span>
  );
}

function CopyButton({ run }: { run: RunResult }) {
  const [copied, setCopied] = useState<'copied' | 'failed' | null>(null);
  const timer = useRef<ReturnType<typeof setTimeout>>(undefined);
  useEffect(() => () => clearTimeout(timer.current), []);
  const copy = async () => {
    const text = copyText(run);
    let ok = true;
    try {
      await navigator.clipboard.writeText(text);
    } catch {
      ok = fallbackCopy(text);
    }
    setCopied(ok ? 'copied' : 'failed');
    clearTimeout(timer.current);
    timer.current = setTimeout(() => setCopied(null), 1500);
  };
  return (
    <button type="button" className="rd-copy" onClick={() => void copy()} data-testid="action-copy" title={run.code !== undefined ? 'Copy the script' : 'Copy the command, shell-quoted'}>
      {copied === 'copied' ? 'Copied' : copied === 'failed' ? 'Copy failed' : run.code !== undefined ? 'Copy script' : 'Copy command'}
    </button>
  );
}

/** Clipboard without the async API (an insecure origin): a selected textarea and execCommand. */
function fallbackCopy(text: string): boolean {
  const area = document.createElement('textarea');
  area.value = text;
  area.style.position = 'fixed';
  area.style.opacity = '0';
  document.body.appendChild(area);
  area.select();
  try {
    return document.execCommand('copy');
  } catch {
    return false;
  } finally {
    area.remove();
  }
}

function Actions({ run, live }: { run: RunResult; live: boolean }) {
  const api = useWarden((s) => s.api);
  const put = useWarden((s) => s.put);
  const report = useWarden((s) => s.report);
  const progress = useWarden((s) => s.stopProgress[run.id]);
  const offline = useWarden((s) => s.connection !== 'online');
  const [stopAsked, setStopAsked] = useState(false);
  const [forceOffered, setForceOffered] = useState(false);
  const [waiting, setWaiting] = useState(false);
  const [yieldText, setYieldText] = useState('');
  const [waitNotice, setWaitNotice] = useState<string | null>(null);
  const [extendText, setExtendText] = useState('30s');
  const [extendNote, setExtendNote] = useState<{ ok: boolean; text: string } | null>(null);
  const [busy, setBusy] = useState<'stop' | 'force' | 'extend' | null>(null);
  const mounted = useRef(true);
  const forceButton = useRef<HTMLButtonElement>(null);
  useEffect(() => {
    mounted.current = true;
    return () => {
      mounted.current = false;
    };
  }, []);

  const stopping = live && (run.state === 'stopping' || stopAsked || progress !== undefined);
  const killed = progress?.step === 'kill';

  const call = async <T,>(what: typeof busy, fn: () => Promise<T>): Promise<T | undefined> => {
    if (!api) return undefined;
    setBusy(what);
    try {
      return await fn();
    } catch (error) {
      report(error);
      return undefined;
    } finally {
      if (mounted.current) setBusy(null);
    }
  };

  const stop = async () => {
    if (stopping) {
      // A second click while stopping offers the force kill.
      setForceOffered(true);
      requestAnimationFrame(() => forceButton.current?.focus());
      return;
    }
    setStopAsked(true);
    const result = await call('stop', () => api!.stop(run.id));
    if (result) put(result);
    else if (mounted.current) setStopAsked(false);
  };

  const force = async () => {
    const result = await call('force', () => api!.stop(run.id, { force: true }));
    if (result) put(result);
  };

  const wait = async () => {
    if (!api) return;
    const text = yieldText.trim();
    const timeoutMs = text === '' ? undefined : parseDuration(text);
    if (text !== '' && timeoutMs === undefined) {
      setWaitNotice(`"${text}" is not a duration: write 10s, 1.5m or 500ms, or leave it empty to wait for the end.`);
      return;
    }
    setWaiting(true);
    setWaitNotice(null);
    const id = run.id;
    try {
      const result = await api.wait(id, timeoutMs === undefined ? {} : { timeoutMs });
      put(result);
      if (!mounted.current) return;
      if (result.state === 'ended') navigate({ view: 'run', id, tab: 'verdict' });
      else setWaitNotice(`Still running after ${duration(timeoutMs ?? result.elapsedMs)} (${duration(result.elapsedMs)} elapsed).`);
    } catch (error) {
      report(error);
    } finally {
      if (mounted.current) setWaiting(false);
    }
  };

  const extend = async (event: FormEvent) => {
    event.preventDefault();
    const byMs = parseDuration(extendText);
    if (byMs === undefined || byMs <= 0) {
      setExtendNote({ ok: false, text: `"${extendText}" is not a duration: write 30s, 1.5m or 500ms.` });
      return;
    }
    if (!api) return;
    setBusy('extend');
    try {
      const result = await api.extend(run.id, byMs);
      put(result);
      if (mounted.current) setExtendNote({ ok: true, text: `Limit now ${result.limitMs === null ? 'none' : duration(result.limitMs)}.` });
    } catch (error) {
      if (mounted.current) setExtendNote({ ok: false, text: messageOf(error) });
    } finally {
      if (mounted.current) setBusy(null);
    }
  };

  // An ended run has nothing here but what was said while it ran (Re-run is beside Copy command).
  if (!live && !waitNotice && !extendNote) return null;

  return (
    <div className="rd-actions" role="toolbar" aria-label="Run actions">
      {live && (
        <>
          <div className="rd-group">
            <button
              type="button"
              className={stopping ? undefined : 'rd-danger'}
              onClick={() => void stop()}
              disabled={offline || busy === 'stop' || killed}
              data-testid="action-stop"
              title={stopping ? 'Being stopped; click for a force kill' : 'Interrupt, then terminate, then kill after the grace'}
            >
              {stopping ? (killed ? 'Killed' : 'Stopping…') : 'Stop'}
            </button>
            {(forceOffered || stopping) && !killed && (
              <button ref={forceButton} type="button" className="rd-danger solid" onClick={() => void force()} disabled={offline || busy === 'force'} data-testid="action-force" title="SIGKILL at once, no grace">
                Force kill
              </button>
            )}
          </div>

          <div className="rd-group">
            <button type="button" onClick={() => void wait()} disabled={offline || waiting} data-testid="action-wait" title="Follow the run to its end, then show the verdict; with a yield time, return after it like the CLI">
              {waiting ? 'Waiting…' : 'Wait'}
            </button>
            <label className="rd-field" title="Empty: wait for the end; a time (10s, 1.5m): return after it, as the CLI's --yield">
              <span>yield after</span>
              <input className="rd-short" value={yieldText} onChange={(e) => setYieldText(e.target.value)} placeholder="the end" disabled={offline || waiting} data-testid="wait-yield" />
            </label>
          </div>

          <form className="rd-group" onSubmit={(e) => void extend(e)}>
            <button type="submit" disabled={offline || stopping || busy === 'extend'} data-testid="action-extend" title="Move the deadline later">
              {run.lease ? 'Renew lease' : 'Extend limit'}
            </button>
            <label className="rd-field">
              <span>by</span>
              <input className="rd-short" value={extendText} onChange={(e) => setExtendText(e.target.value)} disabled={offline || stopping} data-testid="extend-by" />
            </label>
          </form>
        </>
      )}


      {(waitNotice || extendNote) && (
        <div className="rd-notices">
          {waitNotice && (
            <span className="rd-notice" data-testid="wait-notice" role="status">
              <span>{waitNotice}</span>
              <DismissButton onClick={() => setWaitNotice(null)} />
            </span>
          )}
          {extendNote && (
            <span className={`rd-notice${extendNote.ok ? '' : ' bad'}`} data-testid={extendNote.ok ? 'extend-note' : 'extend-error'} role={extendNote.ok ? 'status' : 'alert'}>
              <span>{extendNote.text}</span>
              <DismissButton onClick={() => setExtendNote(null)} />
            </span>
          )}
        </div>
      )}
    </div>
  );
}

/** Re-run: beside Copy command, live or ended (an ended run has no other action to sit with). */
function RerunButton({ run }: { run: RunResult }) {
  const api = useWarden((s) => s.api);
  const put = useWarden((s) => s.put);
  const report = useWarden((s) => s.report);
  const offline = useWarden((s) => s.connection !== 'online');
  const [busy, setBusy] = useState(false);
  const mounted = useRef(true);
  useEffect(() => {
    mounted.current = true;
    return () => {
      mounted.current = false;
    };
  }, []);
  const rerun = async () => {
    if (!api) return;
    setBusy(true);
    try {
      const result = await api.start(rerunRequest(run));
      put(result);
      navigate({ view: 'run', id: result.id, tab: null });
    } catch (error) {
      report(error);
    } finally {
      if (mounted.current) setBusy(false);
    }
  };
  return (
    <button type="button" className="rd-copy" onClick={() => void rerun()} disabled={offline || busy} data-testid="action-rerun" title="Start it again with the same command, directory and limit (or script and session)">
      Re-run
    </button>
  );
}

function DismissButton({ onClick }: { onClick: () => void }) {
  return (
    <button type="button" className="rd-dismiss" onClick={onClick} aria-label="Dismiss" title="Dismiss" data-testid="notice-dismiss">
      ×
    </button>
  );
}
