// The verdict in words, the advice, the notes and the figures behind them.

import type { RunResult } from '../../../../shared/result';
import { bytes, clock, duration, liveDuration, memoryLimitOf, peakFigure, peakMeaning, peakName } from '../../format';
import { liveElapsed, useWarden } from '../../store';
import { relative, verdictSentence } from './describe';
import { useNow } from '../../components/hooks';

export function VerdictView({ run }: { run: RunResult }) {
  const live = run.state !== 'ended';
  const syncedAt = useWarden((s) => s.syncedAt[run.id]);
  const now = useNow(live ? 1000 : null);
  const elapsed = liveElapsed(run, syncedAt, now);
  const stop = run.stop;
  // A live run's peak so far is the tree's latest sample's too, as in the row and the Process tree.
  const tree = useWarden((s) => (live ? s.trees[run.id] : undefined));
  return (
    <div className="rd-scroll-panel">
      <section className={`rd-card rd-verdict ${run.verdict ?? run.state}`}>
        <p className="rd-verdict-text" data-testid="verdict-text">
          {verdictSentence(run, elapsed)}
        </p>
        {run.advice && (
          <div className="rd-advice" data-testid="verdict-advice">
            <strong>Advice</strong>
            <p>{run.advice}</p>
          </div>
        )}
        {run.notes.length > 0 && (
          <ul className="rd-notes" data-testid="verdict-notes">
            {run.notes.map((note, i) => (
              <li key={i}>{note}</li>
            ))}
          </ul>
        )}
      </section>

      <section className="rd-card">
        <h3>Ending</h3>
        <dl className="rd-facts">
          <dt>Exit code</dt>
          <dd className="mono" data-testid="verdict-exit-code">
            {run.exitCode ?? '–'}
          </dd>
          <dt>Signal</dt>
          <dd className="mono" data-testid="verdict-signal">
            {run.signal ?? '–'}
          </dd>
          <dt>Elapsed</dt>
          <dd>
            {live ? liveDuration(elapsed) : duration(elapsed)}
            {live ? ' so far' : ''}
          </dd>
          <dt>Time limit</dt>
          <dd data-testid="verdict-time-limit">{run.limitMs === null ? 'no limit' : duration(run.limitMs)}</dd>
          {memoryLimitOf(run) !== undefined && (
            <>
              <dt>Memory limit</dt>
              <dd>{bytes(memoryLimitOf(run))}</dd>
            </>
          )}
          <dt>Started</dt>
          <dd>{clock(run.startedAt)}</dd>
          <dt>Ended</dt>
          <dd>{live ? 'still running' : clock(run.endedAt)}</dd>
          {(run.stdoutTruncated > 0 || run.stderrTruncated > 0) && (
            <>
              <dt>Output dropped</dt>
              <dd>
                stdout {run.stdoutTruncated.toLocaleString('en-US')}, stderr {run.stderrTruncated.toLocaleString('en-US')} characters
              </dd>
            </>
          )}
        </dl>
      </section>

      {stop && (
        <section className="rd-card" data-testid="stop-record">
          <h3>Stop</h3>
          <dl className="rd-facts">
            <dt>Reason</dt>
            <dd>{stop.reason === 'deadline' ? 'the deadline' : stop.reason === 'user' ? 'a stop request' : 'Warden shutting down'}</dd>
            <dt>Requested</dt>
            <dd>{relative(stop.requestedAtMs)}</dd>
            <dt>Signals</dt>
            <dd>
              {stop.signals.length === 0
                ? 'none'
                : stop.signals.map((s, i) => (
                    <span key={i} className="rd-signal">
                      <code>{s.signal}</code> <span className="muted">{relative(s.atMs)}</span>
                    </span>
                  ))}
            </dd>
            <dt>Ended by</dt>
            <dd data-testid="stop-ended-by">{stop.forcedAtMs !== undefined ? `a force kill at ${relative(stop.forcedAtMs)}` : `the ${stop.endedBy} step`}</dd>
          </dl>
        </section>
      )}

      {run.oom && (
        <section className="rd-card" data-testid="oom-figures">
          <h3>Memory</h3>
          <dl className="rd-facts">
            <dt>Out-of-memory kill</dt>
            <dd className={run.oom.confirmed ? 'rd-fail-text' : undefined}>{run.oom.confirmed ? 'confirmed by the cgroup counter' : run.state === 'ended' ? 'not confirmed' : 'none so far'}</dd>
            <dt title={peakMeaning(peakFigure(run, tree)?.source)}>{peakName(peakFigure(run, tree)?.source).replace(/^./, (c) => c.toUpperCase())}</dt>
            <dd data-testid="oom-peak" data-source={peakFigure(run, tree)?.source}>
              {bytes(peakFigure(run, tree)?.bytes)}
              {run.state === 'ended' ? '' : ' so far'}
            </dd>
            <dt>Memory limit</dt>
            <dd>{memoryLimitOf(run) === undefined ? 'none' : bytes(memoryLimitOf(run))}</dd>
          </dl>
        </section>
      )}
    </div>
  );
}
