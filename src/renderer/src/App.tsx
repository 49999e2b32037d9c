// A placeholder until the UI issue: the live runs with their verdicts, and an
// empty state that tells a newcomer how to start one.

import { useEffect, useState } from 'react';
import type { RunResult } from '../../shared/result';

export function App() {
  const [runs, setRuns] = useState<RunResult[]>([]);
  const [error, setError] = useState<string | null>(null);
  const api = window.warden;

  useEffect(() => {
    if (!api) return;
    const refresh = () => api.list().then(setRuns, (e: unknown) => setError(String(e)));
    refresh();
    return api.subscribe((event) => {
      if (event.type !== 'output') refresh();
    });
  }, [api]);

  return (
    <main>
      <h1>Warden</h1>
      {!api && <p className="error">The Warden API is not available in this page.</p>}
      {error && <p className="error">{error}</p>}
      {runs.length === 0 ? (
        <section className="empty">
          <p>No runs yet. Start one from a terminal:</p>
          <pre>npx warden run --limit 30s -- python3 script.py</pre>
        </section>
      ) : (
        <table>
          <thead>
            <tr>
              <th>Command</th>
              <th>State</th>
              <th>Verdict</th>
              <th>Elapsed</th>
            </tr>
          </thead>
          <tbody>
            {runs.map((run) => (
              <tr key={run.id}>
                <td>{(run.argv ?? []).join(' ')}</td>
                <td>{run.state}</td>
                <td>{run.verdict ?? ''}</td>
                <td>{(run.elapsedMs / 1000).toFixed(2)} s</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </main>
  );
}
