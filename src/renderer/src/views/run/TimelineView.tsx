// The run's timeline: the history's events merged with what the page saw live.

import { useEffect, useMemo, useState } from 'react';
import type { EventRecord } from '../../../../shared/history';
import type { RunResult, SignalSent } from '../../../../shared/result';
import { messageOf, useWarden } from '../../store';
import { buildTimeline, relative, type LiveExtension } from './describe';

const NO_SIGNALS: SignalSent[] = [];

export function TimelineView({ run, extensions }: { run: RunResult; extensions: LiveExtension[] }) {
  const api = useWarden((s) => s.api);
  const signals = useWarden((s) => s.signals[run.id] ?? NO_SIGNALS);
  const [stored, setStored] = useState<EventRecord[]>([]);
  const [error, setError] = useState<string | null>(null);
  const ended = run.state === 'ended';

  // Fetched again when the run ends or the page learns of a new signal or limit.
  useEffect(() => {
    if (!api) return;
    let current = true;
    api.timeline(run.id).then(
      (events) => {
        if (!current) return;
        setStored(events);
        setError(null);
      },
      (e: unknown) => current && setError(messageOf(e)),
    );
    return () => {
      current = false;
    };
  }, [api, run.id, ended, signals.length, run.limitMs]);

  const entries = useMemo(() => buildTimeline(run, stored, signals, extensions), [run, stored, signals, extensions]);

  return (
    <div className="rd-scroll-panel">
      <section className="rd-card">
        {error && <p className="error">The history's timeline could not be read: {error}</p>}
        <ol className="rd-timeline">
          {entries.map((entry, i) => (
            <li key={i} className={`rd-tl rd-tl-${entry.kind}`} data-testid="timeline-entry" data-kind={entry.kind}>
              <span className="rd-tl-time mono">{relative(entry.atMs)}</span>
              <span className="rd-tl-dot" aria-hidden="true" />
              <span className="rd-tl-body">
                <span className="rd-tl-title">{entry.title}</span>
                {entry.detail && <span className="rd-tl-detail">{entry.detail}</span>}
              </span>
            </li>
          ))}
          {!ended && (
            <li className="rd-tl rd-tl-now" aria-live="polite">
              <span className="rd-tl-time mono" />
              <span className="rd-tl-dot" aria-hidden="true" />
              <span className="rd-tl-body">
                <span className="rd-tl-title muted">{run.state === 'queued' ? 'Waiting in the queue…' : 'Still running…'}</span>
              </span>
            </li>
          )}
        </ol>
      </section>
    </div>
  );
}
