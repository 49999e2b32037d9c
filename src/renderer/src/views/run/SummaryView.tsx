// The summary an ended run that did not complete opens on: the verdict in
// words and its advice, then the last lines of its output with the error
// lines marked (and kept in view when they came earlier), then the way to the
// full log.

import type { RunResult } from '../../../../shared/result';
import { crashPhrase } from '../../../../shared/crash/phrase';
import { navigate } from '../../router';
import { parseAnsi } from './ansi';
import { ansiPiece } from './AnsiText';
import { askStream } from './output-intent';
import { coreSentence, crashFacts, scriptFrame, summaryHeading, summaryTails, type StreamTail } from './summary';
import { useRunOutput, useWarden } from '../../store';
import { useCrash } from './crash';

const TAIL_LINES = 30;

export function SummaryView({ run }: { run: RunResult }) {
  const texts = useRunOutput(run);
  // A session script's traceback or crash report names the script's line where it stopped.
  const frame = run.kind === 'python' ? scriptFrame(texts.stderr) : null;
  // The report that ends its output (a traceback, a panic, pytest's summary): the heading, and the lines marked.
  const report = useCrash(run, texts);
  const tails = summaryTails(texts, TAIL_LINES, frame?.stderrLine, report);
  const said = summaryHeading(run);
  const phrase = report ? crashPhrase(report.traceback, run.cwd) : null;
  const scriptLineText = frame ? (run.code ?? '').split('\n')[frame.scriptLine - 1] : undefined;
  // The last sample of the tree this page saw: the process that crashed, when it was the main one.
  const root = useWarden((s) => s.trees[run.id]?.roots[0]);
  const crash = crashFacts({ ...run, stderr: texts.stderr }, root ? { pid: root.pid, command: root.command } : undefined);
  const openLog = (stream?: 'stdout' | 'stderr') => {
    if (stream) askStream(run.id, stream);
    navigate({ view: 'run', id: run.id, tab: 'output' });
  };
  return (
    <div className="rd-scroll-panel" data-testid="run-summary">
      <section className={`rd-card rd-verdict ${run.verdict ?? run.state}`}>
        {phrase && (
          <p className="rd-verdict-text rd-crash-heading" data-testid="summary-crash-heading" data-stream={report!.stream} data-line={report!.traceback.errorLine}>
            {phrase.charAt(0).toUpperCase()}
            {phrase.slice(1)}
          </p>
        )}
        <p className={phrase ? 'rd-verdict-sub' : 'rd-verdict-text'} data-testid="summary-verdict">
          {said.heading}
        </p>
        {run.advice && (
          <div className="rd-advice" data-testid="summary-advice">
            <strong>Advice</strong>
            <p>{run.advice}</p>
          </div>
        )}
        {said.notes.length > 0 && (
          <ul className="rd-notes" data-testid="summary-notes">
            {said.notes.map((note, i) => (
              <li key={i}>{note}</li>
            ))}
          </ul>
        )}
      </section>

      {frame && (
        <section className="rd-card" data-testid="summary-script-line" data-line={frame.scriptLine}>
          <h3>
            Where the script stopped
            <span className="rd-card-aside">
              <button type="button" className="rd-link" onClick={() => navigate({ view: 'run', id: run.id, tab: 'script' })} data-testid="summary-open-script">
                open the script
              </button>
            </span>
          </h3>
          <div className="rd-tail-lines">
            <div className="rd-tail-line rd-error-line">
              <span className="rd-gutter" style={{ width: `${String(frame.scriptLine).length + 2}ch` }} aria-hidden="true">
                {frame.scriptLine}
              </span>
              <span className="rd-text">{scriptLineText === undefined || scriptLineText === '' ? ' ' : scriptLineText}</span>
            </div>
          </div>
          <p className="muted">
            Line {frame.scriptLine} of the script, as {/Fatal Python error/.test(run.stderr) ? "Python's crash report" : 'the traceback'} in stderr (line {frame.stderrLine.toLocaleString('en-US')}) names it.
          </p>
        </section>
      )}
      {crash && (
        <section className="rd-card" data-testid="summary-crash">
          <h3>{crash.title}</h3>
          <dl className="rd-facts">
            <dt>Exit status</dt>
            <dd data-testid="crash-status">{crash.status}</dd>
            {crash.culprit && (
              <>
                <dt>Process</dt>
                <dd data-testid="crash-culprit">
                  {crash.culprit.pid !== null && `pid ${crash.culprit.pid}`}
                  {crash.culprit.pid !== null && crash.culprit.command !== null && ': '}
                  {crash.culprit.command !== null && <code>{crash.culprit.command}</code>}
                </dd>
              </>
            )}
            {run.core && (
              <>
                <dt>Core dump</dt>
                <dd data-testid="crash-core" data-dumped={String(run.core.dumped)}>
                  {coreSentence(run.core, crash.culprit?.pid ?? undefined)}
                </dd>
              </>
            )}
          </dl>
          {crash.python && !crash.faultReport && (
            <p className="muted" data-testid="crash-faulthandler">
              Python printed no report of where it crashed: run it again with <code>PYTHONFAULTHANDLER=1</code> in its environment (or <code>python3 -X faulthandler</code>) and the stack of every thread goes to stderr when it dies.
            </p>
          )}
          {crash.python && crash.faultReport && (
            <p className="muted" data-testid="crash-fault-report">
              Python&apos;s report of where it crashed is in stderr, below.
            </p>
          )}
        </section>
      )}
      {tails.length === 0 ? (
        <section className="rd-card">
          <p className="muted" data-testid="summary-no-output">
            {run.verdict === 'spawn-failed' ? 'No output: it never started.' : 'It wrote no output.'}
          </p>
        </section>
      ) : (
        tails.map((tail) => <TailCard key={tail.stream} tail={tail} scriptFrameLine={tail.stream === 'stderr' ? frame?.stderrLine : undefined} onOpen={() => openLog(tail.stream)} />)
      )}

      <div className="rd-summary-foot">
        <button type="button" className="primary" onClick={() => openLog()} data-testid="summary-open-log">
          Open the full log
        </button>
      </div>
    </div>
  );
}

function TailCard({ tail, scriptFrameLine, onOpen }: { tail: StreamTail; scriptFrameLine?: number; onOpen: () => void }) {
  const shown = tail.blocks.reduce((n, b) => n + b.lines.length, 0);
  const digits = String(tail.totalLines).length;
  return (
    <section className={`rd-card rd-tail${tail.stream === 'stderr' ? ' rd-stderr' : ''}`} data-testid="summary-tail" data-stream={tail.stream}>
      <h3>
        {shown < tail.totalLines ? `Last lines of ${tail.stream}` : tail.stream}
        <span className="rd-card-aside">
          {tail.totalLines.toLocaleString('en-US')} line{tail.totalLines === 1 ? '' : 's'} ·{' '}
          <button type="button" className="rd-link" onClick={onOpen} data-testid={`summary-open-${tail.stream}`}>
            open all of {tail.stream}
          </button>
        </span>
      </h3>
      <div className="rd-tail-lines">
        {tail.blocks.map((block, b) => (
          <div key={b}>
            {block.skippedBefore > 0 && (
              <div className="rd-tail-gap muted" data-testid="summary-gap">
                ⋯ {block.skippedBefore.toLocaleString('en-US')} line{block.skippedBefore === 1 ? '' : 's'} ⋯
              </div>
            )}
            {block.lines.map((line) => (
              <div
                key={line.no}
                className={`rd-tail-line${line.error ? ' rd-error-line' : ''}${line.no === scriptFrameLine || line.crash === 'frame' ? ' rd-script-frame' : ''}`}
                data-testid="summary-line"
                data-line={line.no}
                data-error={line.error ? 'true' : 'false'}
                data-crash={line.crash}
                data-script-frame={line.no === scriptFrameLine ? 'true' : undefined}
              >
                <span className="rd-gutter" style={{ width: `${digits + 2}ch` }} aria-hidden="true">
                  {line.no}
                </span>
                <span className="rd-text">
                  {parseAnsi(line.text).spans.map((s, k) => ansiPiece(k, s.text, s.style))}
                </span>
              </div>
            ))}
          </div>
        ))}
      </div>
    </section>
  );
}
