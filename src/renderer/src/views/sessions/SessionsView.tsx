// Sessions: every Python interpreter session, asked for every 2 s and
// whenever one of their scripts starts, queues or ends. Restart and Close act
// on one session; either asks first when it would end a script.

import { Fragment, useCallback, useEffect, useRef, useState } from 'react';
import type { SessionInfo } from '../../../../shared/result';
import { bytes, clock, commandLine } from '../../format';
import { hrefOf } from '../../router';
import { messageOf, useWarden } from '../../store';
import { confirmText, needsConfirm, sessionRunsKey, sortSessions, type SessionAction } from './model';
import './sessions.css';

const REFRESH_MS = 2000;
const COLUMNS = 10;

export function SessionsView() {
  const api = useWarden((s) => s.api);
  const report = useWarden((s) => s.report);
  const runsKey = useWarden((s) => sessionRunsKey(s.runs, s.order));

  const [sessions, setSessions] = useState<SessionInfo[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [confirming, setConfirming] = useState<{ name: string; action: SessionAction } | null>(null);
  const [pending, setPending] = useState<Record<string, SessionAction>>({});
  const [rowErrors, setRowErrors] = useState<Record<string, string>>({});

  // Answers can overtake each other: show one only when it is newer than the one shown.
  const asked = useRef(0);
  const shown = useRef(0);
  // Report a failing refresh to the banner once, not every 2 s; the view keeps saying it.
  const failing = useRef(false);

  const refresh = useCallback(() => {
    if (!api) return;
    const n = ++asked.current;
    api.sessions().then(
      (list) => {
        if (n <= shown.current) return;
        shown.current = n;
        failing.current = false;
        setSessions(sortSessions(list));
        setError(null);
      },
      (err: unknown) => {
        if (n <= shown.current) return;
        shown.current = n;
        setError(messageOf(err));
        if (!failing.current) report(err);
        failing.current = true;
      },
    );
  }, [api, report]);

  useEffect(() => {
    const timer = setInterval(() => {
      if (typeof document === 'undefined' || !document.hidden) refresh();
    }, REFRESH_MS);
    return () => clearInterval(timer);
  }, [refresh]);

  // First load, and again whenever a session's script starts, queues or ends.
  useEffect(() => refresh(), [runsKey, refresh]);

  const act = async (name: string, action: SessionAction) => {
    if (!api) return;
    setConfirming(null);
    setPending((p) => ({ ...p, [name]: action }));
    setRowErrors(({ [name]: _gone, ...rest }) => rest);
    try {
      await (action === 'restart' ? api.restartSession(name) : api.closeSession(name));
    } catch (err) {
      setRowErrors((e) => ({ ...e, [name]: `Could not ${action} ${name}: ${messageOf(err)}` }));
      report(err);
    } finally {
      setPending(({ [name]: _done, ...rest }) => rest);
      refresh();
    }
  };

  const ask = (session: SessionInfo, action: SessionAction) => {
    if (needsConfirm(action, session)) setConfirming({ name: session.name, action });
    else void act(session.name, action);
  };

  return (
    <section className="view sessions">
      <header className="sessions-head">
        <h1>Sessions</h1>
        {sessions && sessions.length > 0 && (
          <span className="muted">
            {sessions.length} session{sessions.length === 1 ? '' : 's'} · {sessions.filter((s) => s.running !== null).length} running
          </span>
        )}
      </header>

      {error && (
        <p className="sessions-error error" role="alert">
          Could not list the sessions: {error}
        </p>
      )}

      {sessions === null && !error && <p className="muted">Loading sessions…</p>}

      {sessions && sessions.length === 0 && <NoSessions />}

      {sessions && sessions.length > 0 && (
        <table className="data-table sessions-table">
          <colgroup>
            <col className="col-name" />
            <col className="col-state" />
            <col className="col-pid" />
            <col className="col-python" />
            <col className="col-count" />
            <col className="col-queued" />
            <col />
            <col className="col-memory" />
            <col className="col-started" />
            <col className="col-actions" />
          </colgroup>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">State</th>
              <th scope="col" className="num">
                PID
              </th>
              <th scope="col">Python</th>
              <th scope="col" className="num">
                Scripts run
              </th>
              <th scope="col" className="num">
                Queued
              </th>
              <th scope="col">Running script</th>
              <th scope="col" className="num">
                Memory
              </th>
              <th scope="col">Started</th>
              <th scope="col">
                <span className="sr-only">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {sessions.map((session) => {
              const asking = confirming?.name === session.name ? confirming.action : null;
              const rowError = rowErrors[session.name];
              return (
                <Fragment key={session.name}>
                  <SessionRow session={session} pending={pending[session.name]} asking={asking !== null} onAction={(action) => ask(session, action)} />
                  {asking && (
                    <tr className="sessions-confirm">
                      <td colSpan={COLUMNS}>
                        <div className="sessions-note" role="alertdialog" aria-label={`${asking === 'restart' ? 'Restart' : 'Close'} ${session.name}`}>
                          <span>{confirmText(asking, session)}</span>
                          <span className="sessions-note-actions">
                            <button type="button" className="danger" onClick={() => void act(session.name, asking)} data-testid="session-confirm" autoFocus>
                              {asking === 'restart' ? 'Restart' : 'Close session'}
                            </button>
                            <button type="button" onClick={() => setConfirming(null)} data-testid="session-cancel">
                              Cancel
                            </button>
                          </span>
                        </div>
                      </td>
                    </tr>
                  )}
                  {rowError && (
                    <tr className="sessions-row-error">
                      <td colSpan={COLUMNS}>
                        <div className="sessions-note error" role="alert">
                          <span>{rowError}</span>
                          <button type="button" onClick={() => setRowErrors(({ [session.name]: _gone, ...rest }) => rest)} aria-label="Dismiss">
                            ×
                          </button>
                        </div>
                      </td>
                    </tr>
                  )}
                </Fragment>
              );
            })}
          </tbody>
        </table>
      )}
    </section>
  );
}

function SessionRow({ session, pending, asking, onAction }: { session: SessionInfo; pending: SessionAction | undefined; asking: boolean; onAction: (action: SessionAction) => void }) {
  const running = session.running;
  const offline = useWarden((s) => s.connection !== 'online');
  // Selected as plain values, so a script's output does not re-render the row.
  const runningLine = useWarden((s) => {
    const run = running ? s.runs[running] : undefined;
    return run ? commandLine(run) : null;
  });
  const rss = useWarden((s) => (running ? s.trees[running]?.rssBytes : undefined));
  const busy = pending !== undefined || asking;

  return (
    <tr className="sessions-row" data-testid="session-row" data-name={session.name}>
      <td className="sessions-name" title={session.name}>
        {session.name}
      </td>
      <td>
        <span className={`badge session-${session.state}`}>{session.state}</span>
      </td>
      <td className="num">{session.pid ?? <span className="muted">–</span>}</td>
      <td>{session.pythonVersion ?? <span className="muted">–</span>}</td>
      <td className="num">{session.scriptsRun}</td>
      <td className="num">{session.queued > 0 ? session.queued : <span className="muted">0</span>}</td>
      <td className="sessions-running">
        {running ? (
          <a href={hrefOf({ view: 'run', id: running, tab: null })} title={runningLine ?? `Run ${running}`}>
            <code>{runningLine || running}</code>
          </a>
        ) : (
          <span className="muted">–</span>
        )}
      </td>
      <td className="num" title={rss === undefined ? 'Memory of the running script’s processes, while one runs' : undefined}>
        {rss === undefined ? <span className="muted">–</span> : bytes(rss)}
      </td>
      <td className="sessions-started">
        {session.startedAt ? (
          <time dateTime={session.startedAt} title={new Date(session.startedAt).toLocaleString()}>
            {clock(session.startedAt)}
          </time>
        ) : (
          <span className="muted">–</span>
        )}
      </td>
      <td className="sessions-actions">
        <button type="button" onClick={() => onAction('restart')} disabled={busy || offline} data-testid="session-restart">
          {pending === 'restart' ? 'Restarting…' : 'Restart'}
        </button>
        <button type="button" onClick={() => onAction('close')} disabled={busy || offline} data-testid="session-close">
          {pending === 'close' ? 'Closing…' : 'Close'}
        </button>
      </td>
    </tr>
  );
}

function NoSessions() {
  return (
    <div className="empty sessions-empty" data-testid="sessions-empty">
      <h2>No Python sessions</h2>
      <p>A session keeps one Python interpreter alive between scripts, so variables and imports carry over. The first script that names a session starts it:</p>
      <pre>warden run --python --session NAME -c &quot;print(1)&quot;</pre>
      <p>
        or choose the Python kind on the <a href={hrefOf({ view: 'new' })}>New run</a> form and give it a session name.
      </p>
    </div>
  );
}
