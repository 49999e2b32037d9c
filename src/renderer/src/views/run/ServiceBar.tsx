// A service's line in the run header: ready or not, a link to each port that
// answers HTTP (the others by number), and for a run with a stdin pipe a
// one-line input that sends what is typed (with a newline) to its stdin.

import { useState, type FormEvent } from 'react';
import type { RunResult } from '../../../../shared/result';
import { useWarden } from '../../store';
import { hasServiceBar, serviceView } from './service';

export function ServiceBar({ run }: { run: RunResult }) {
  const view = serviceView(run);
  if (!hasServiceBar(view)) return null;
  return (
    <div className="rd-service" data-testid="service-bar">
      {view.readiness !== null && (
        <span className={`badge ${view.tone === 'ok' ? 'completed' : view.tone === 'bad' ? 'failed' : 'running'}`} data-testid="service-ready" title={view.line ?? undefined}>
          {view.readiness}
        </span>
      )}
      {view.ports.length > 0 && (
        <span className="rd-ports" data-testid="service-ports">
          listening on{' '}
          {view.ports.map((p, i) => (
            <span key={p.port}>
              {i > 0 && ', '}
              {p.url !== null ? (
                <a href={p.url} target="_blank" rel="noopener noreferrer" data-testid="service-port-link" title={`Open ${p.url}`}>
                  {p.port}
                </a>
              ) : (
                <code title={`${p.address}:${p.port}`}>{p.port}</code>
              )}
            </span>
          ))}
        </span>
      )}
      {view.lease !== null && (
        <span className="muted" data-testid="service-lease" title="Renew lease moves it later; at its end the run is stopped">
          {view.lease}
        </span>
      )}
      {view.takesInput && <InputLine id={run.id} />}
    </div>
  );
}

/** One line of input for the run's stdin: Enter sends it with a newline; "End input" closes its stdin. */
function InputLine({ id }: { id: string }) {
  const api = useWarden((s) => s.api);
  const put = useWarden((s) => s.put);
  const report = useWarden((s) => s.report);
  const offline = useWarden((s) => s.connection !== 'online');
  const [text, setText] = useState('');
  const [busy, setBusy] = useState(false);
  const send = async (input: { text?: string; eof?: boolean }) => {
    if (!api) return;
    setBusy(true);
    try {
      put(await api.input(id, input));
      if (input.text !== undefined) setText('');
    } catch (error) {
      report(error);
    } finally {
      setBusy(false);
    }
  };
  const submit = (e: FormEvent) => {
    e.preventDefault();
    void send({ text: `${text}\n` });
  };
  return (
    <form className="rd-input" onSubmit={submit} data-testid="service-input">
      <input value={text} onChange={(e) => setText(e.target.value)} placeholder="Type an answer for its stdin, Enter sends it" aria-label="Input for the run's stdin" disabled={offline || busy} data-testid="service-input-text" />
      <button type="submit" disabled={offline || busy} data-testid="service-input-send">
        Send
      </button>
      <button type="button" onClick={() => void send({ eof: true })} disabled={offline || busy} data-testid="service-input-eof" title="Close its stdin (end of file)">
        End input
      </button>
    </form>
  );
}
