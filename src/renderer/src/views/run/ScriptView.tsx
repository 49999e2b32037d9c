// A Python run's script, whole, with line numbers; the line its traceback
// names is marked (where it stopped or failed).

import type { RunResult } from '../../../../shared/result';
import { useRunOutput } from '../../store';
import { scriptErrorLine } from './summary';

export function ScriptView({ run }: { run: RunResult }) {
  const { stderr } = useRunOutput(run);
  const code = run.code ?? '';
  const lines = code.replace(/\n$/, '').split('\n');
  const failedAt = scriptErrorLine(stderr);
  const digits = String(lines.length).length;
  return (
    <div className="rd-scroll-panel">
      <section className="rd-card">
        <h3>
          Script
          <span className="rd-card-aside">
            {lines.length} line{lines.length === 1 ? '' : 's'} · session {run.session ?? 'default'}
            {failedAt !== null ? ` · the traceback names line ${failedAt}` : ''}
          </span>
        </h3>
        {code.trim() === '' ? (
          <p className="muted">The script is empty.</p>
        ) : (
          <pre className="rd-script" data-testid="script-view">
            {lines.map((line, i) => (
              <div key={i} className={`rd-script-line${failedAt === i + 1 ? ' rd-error-line' : ''}`} data-testid="script-line" data-line={i + 1} data-error={failedAt === i + 1 ? 'true' : 'false'}>
                <span className="rd-gutter" style={{ width: `${digits + 2}ch` }} aria-hidden="true">
                  {i + 1}
                </span>
                <span className="rd-text">{line === '' ? ' ' : line}</span>
              </div>
            ))}
          </pre>
        )}
      </section>
    </div>
  );
}
