// A run's process tree: the live sample while it runs (indented, escaped
// processes marked, each with "Send signal"), then what the teardown did and
// the peak figures.

import { useEffect, useRef, useState } from 'react';
import type { ProcessSignal } from '../../../../shared/api';
import type { ProcNode, ProcTreeSnapshot } from '../../../../shared/proc-tree';
import type { Proc, RunResult } from '../../../../shared/result';
import { bytes, clock, columnBytes, duration, memoryLimitOf, peakFigure, peakMeaning, peakName, shortCommand } from '../../format';
import { messageOf, useWarden } from '../../store';
import { procStateWord, treeRows, type TreeSort } from './describe';
import { TelemetryCharts } from './TelemetryCharts';

export function TreeView({ run, tree }: { run: RunResult; tree: ProcTreeSnapshot | undefined }) {
  const ended = run.state === 'ended';
  const peak = tree?.peak ?? run.peak;
  // One figure in every view, named for what it is: the cgroup's peak counter where the run has one, else the RSS sum sampled.
  const figure = peakFigure(run, tree);
  return (
    <div className="rd-scroll-panel">
      {!ended && <LiveTree tree={tree} queued={run.state === 'queued'} runId={run.id} />}
      {ended && tree && tree.roots.length > 0 && <LiveTree tree={tree} queued={false} title="Last sample while it ran" />}
      <TelemetryCharts run={run} />
      {ended && <Teardown run={run} />}
      <section className="rd-card">
        <h3>Peak</h3>
        {peak ? (
          <dl className="rd-facts">
            <dt title={peakMeaning(figure?.source)}>Memory ({peakName(figure?.source)})</dt>
            <dd data-testid="peak-rss" data-source={figure?.source}>
              {bytes(figure?.bytes)}
              {memoryLimitOf(run) !== undefined && <span data-testid="peak-memory-limit"> of {bytes(memoryLimitOf(run))} limit</span>}
              <span className="muted"> · {peakMeaning(figure?.source)}</span>
            </dd>
            <dt>Processes</dt>
            <dd data-testid="peak-processes" title="The most of its processes alive at once, as the samples saw them">
              {peak.processes} <span className="muted">at most at once</span>
            </dd>
          </dl>
        ) : (
          <p className="muted">No samples were taken{ended ? '' : ' yet'}.</p>
        )}
      </section>
    </div>
  );
}

function LiveTree({ tree, queued, title = 'Processes', runId }: { tree: ProcTreeSnapshot | undefined; queued: boolean; title?: string; runId?: string }) {
  if (!tree) {
    return (
      <section className="rd-card">
        <h3>{title}</h3>
        <p className="muted">{queued ? 'Queued: no processes yet.' : 'Waiting for the first sample…'}</p>
      </section>
    );
  }
  return <TreeTable tree={tree} title={title} runId={runId} />;
}

/** `runId`: a live run, whose processes each get "Send signal". */
function TreeTable({ tree, title, runId }: { tree: ProcTreeSnapshot; title: string; runId?: string }) {
  const [folded, setFolded] = useState<ReadonlySet<number>>(() => new Set());
  // Siblings by CPU or RSS, the highest first, as htop sorts; again: the tree's own order.
  const [sort, setSort] = useState<TreeSort>('tree');
  const sortBy = (key: TreeSort) => setSort((current) => (current === key ? 'tree' : key));
  const [target, setTarget] = useState<ProcNode | null>(null);
  const [sent, setSent] = useState<string | null>(null);
  const offline = useWarden((s) => s.connection !== 'online');
  const rows = treeRows(tree.roots, folded, sort);
  const toggle = (pid: number) =>
    setFolded((current) => {
      const next = new Set(current);
      if (next.has(pid)) next.delete(pid);
      else next.add(pid);
      return next;
    });
  return (
    <section className="rd-card">
      <h3>
        {title}
        <span className="rd-card-aside">
          sampled {clock(tree.sampledAt)}
          {tree.source === 'ps' ? ' · from ps: escaped processes reparented to init are not shown' : ''}
        </span>
      </h3>
      {rows.length === 0 ? (
        <p className="muted">Nothing of the run is left.</p>
      ) : (
        <table className="rd-table rd-tree" data-testid="proc-tree">
          <thead>
            <tr>
              <th className="num">PID</th>
              <th>Command</th>
              <th>State</th>
              <th className="num" aria-sort={sort === 'cpu' ? 'descending' : 'none'}>
                <button type="button" className={`rd-tree-sort${sort === 'cpu' ? ' on' : ''}`} onClick={() => sortBy('cpu')} data-testid="tree-sort-cpu" title="Order each process's children by CPU, the highest first (again: as the tree)">
                  CPU{sort === 'cpu' ? ' ▼' : ''}
                </button>
              </th>
              <th className="num" aria-sort={sort === 'rss' ? 'descending' : 'none'}>
                <button type="button" className={`rd-tree-sort${sort === 'rss' ? ' on' : ''}`} onClick={() => sortBy('rss')} data-testid="tree-sort-rss" title="Order each process's children by RSS, the highest first (again: as the tree)">
                  RSS{sort === 'rss' ? ' ▼' : ''}
                </button>
              </th>
              {runId && (
                <th className="rd-tree-act">
                  <span className="sr-only">Actions</span>
                </th>
              )}
            </tr>
          </thead>
          <tbody>
            {rows.map(({ node, depth, guides, hasChildren, folded: isFolded, hidden }) => (
              <tr
                key={node.pid}
                data-testid="tree-node"
                data-pid={node.pid}
                data-depth={depth}
                data-escaped={node.escaped ? 'true' : 'false'}
                data-folded={isFolded ? 'true' : 'false'}
                className={node.escaped ? 'rd-escaped' : undefined}
              >
                <td className="num mono">{node.pid}</td>
                <td>
                  <div className="rd-cell-flex rd-tree-cell">
                    {guides && (
                      <span className="rd-tree-guides" aria-hidden="true">
                        {guides}
                      </span>
                    )}
                    {hasChildren ? (
                      <button
                        type="button"
                        className="rd-tree-fold"
                        onClick={() => toggle(node.pid)}
                        aria-expanded={!isFolded}
                        aria-label={isFolded ? `Show the processes under ${node.pid}` : `Hide the processes under ${node.pid}`}
                        data-testid="tree-fold"
                      >
                        {isFolded ? '▸' : '▾'}
                      </button>
                    ) : (
                      depth === 0 && <span className="rd-tree-fold-space" aria-hidden="true" />
                    )}
                    <code title={node.command}>{shortCommand(node.command)}</code>
                    {isFolded && <span className="muted rd-tree-hidden">{hidden} hidden</span>}
                    {node.escaped && (
                      <span className="badge escaped" title="Left the run's process group or tree: a signal to the group misses it">
                        escaped
                      </span>
                    )}
                  </div>
                </td>
                <td title={procStateWord(node.state)}>
                  <span className="mono">{node.state}</span> <span className="muted">{procStateWord(node.state)}</span>
                </td>
                <td className="num">{node.cpuPercent.toFixed(1)} %</td>
                <td className="num">{columnBytes(node.rssBytes)}</td>
                {runId && (
                  <td className="rd-tree-act">
                    <button type="button" className="rd-small" onClick={() => setTarget(node)} disabled={offline} data-testid="tree-signal" title={`Send SIGTERM or SIGKILL to ${node.pid} only`}>
                      Send signal
                    </button>
                  </td>
                )}
              </tr>
            ))}
          </tbody>
          <tfoot>
            <tr data-testid="tree-totals">
              <td colSpan={3}>
                {tree.processes} process{tree.processes === 1 ? '' : 'es'}
              </td>
              <td className="num">{tree.cpuPercent.toFixed(1)} %</td>
              <td className="num" title="The sum of its processes' RSS at this sample">{columnBytes(tree.rssBytes)}</td>
              {runId && <td />}
            </tr>
          </tfoot>
        </table>
      )}
      {sent && (
        <p className="rd-tree-sent" role="status" data-testid="tree-signal-sent">
          {sent}
          <button type="button" className="rd-tree-fold" onClick={() => setSent(null)} aria-label="Dismiss">
            ×
          </button>
        </p>
      )}
      {runId && target && (
        <SignalDialog
          runId={runId}
          node={target}
          onClose={(done) => {
            setTarget(null);
            if (done) setSent(done);
          }}
        />
      )}
    </section>
  );
}

/**
 * Confirms a signal to one process, naming its pid and command; the host
 * refuses any pid that is not in this run's tree when it sends.
 */
function SignalDialog({ runId, node, onClose }: { runId: string; node: ProcNode; onClose: (sent: string | null) => void }) {
  const api = useWarden((s) => s.api);
  const offline = useWarden((s) => s.connection !== 'online');
  const dialog = useRef<HTMLDialogElement>(null);
  const [signal, setSignal] = useState<ProcessSignal>('TERM');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    const d = dialog.current;
    if (d && !d.open) d.showModal();
    return () => d?.close();
  }, []);
  const send = async () => {
    if (!api) return;
    setBusy(true);
    setError(null);
    try {
      await api.signal(runId, node.pid, signal);
      onClose(`SIG${signal} sent to ${node.pid} (${node.command})`);
    } catch (e) {
      setError(messageOf(e));
      setBusy(false);
    }
  };
  return (
    <dialog
      ref={dialog}
      className="rd-dialog"
      aria-labelledby="rd-signal-title"
      data-testid="signal-dialog"
      onCancel={(e) => {
        e.preventDefault();
        onClose(null);
      }}
    >
      <form
        method="dialog"
        onSubmit={(e) => {
          e.preventDefault();
          void send();
        }}
      >
        <h3 id="rd-signal-title">Send a signal to process {node.pid}</h3>
        <p>
          <code className="rd-dialog-command" title={node.command}>
            {node.command}
          </code>
        </p>
        <fieldset className="rd-dialog-choices">
          <legend className="sr-only">Signal</legend>
          <label>
            <input type="radio" name="signal" value="TERM" checked={signal === 'TERM'} onChange={() => setSignal('TERM')} data-testid="signal-term" /> SIGTERM <span className="muted">asks it to end</span>
          </label>
          <label>
            <input type="radio" name="signal" value="KILL" checked={signal === 'KILL'} onChange={() => setSignal('KILL')} data-testid="signal-kill" /> SIGKILL <span className="muted">ends it at once</span>
          </label>
        </fieldset>
        <p className="muted">Only this process gets it, not the rest of the run; it is recorded on the timeline.</p>
        {error && (
          <p className="rd-fail-text" role="alert" data-testid="signal-error">
            {error}
          </p>
        )}
        <div className="rd-dialog-actions">
          <button type="submit" className="rd-danger solid" disabled={busy || offline} data-testid="signal-confirm" autoFocus>
            Send SIG{signal} to {node.pid}
          </button>
          <button type="button" onClick={() => onClose(null)} data-testid="signal-cancel">
            Cancel
          </button>
        </div>
      </form>
    </dialog>
  );
}

function ProcList({ procs }: { procs: Proc[] }) {
  return (
    <table className="rd-table">
      <thead>
        <tr>
          <th className="num">PID</th>
          <th className="num">PPID</th>
          <th className="num">PGID</th>
          <th>Command</th>
        </tr>
      </thead>
      <tbody>
        {procs.map((p) => (
          <tr key={p.pid}>
            <td className="num mono">{p.pid}</td>
            <td className="num mono">{p.ppid}</td>
            <td className="num mono">{p.pgid}</td>
            <td>
              <code title={p.command}>{shortCommand(p.command)}</code>
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function Teardown({ run }: { run: RunResult }) {
  const t = run.teardown;
  return (
    <section className="rd-card" data-testid="teardown-report">
      <h3>
        Teardown
        {t && (
          <span className={`rd-pill ${t.survivors.length > 0 ? 'fail' : t.complete ? 'ok' : 'warn'}`} data-testid="teardown-pill">
            {t.survivors.length > 0 ? `${t.survivors.length} survived` : t.complete ? 'complete' : 'incomplete'}
          </span>
        )}
      </h3>
      {!t ? (
        <p className="muted">No teardown was needed: nothing of the run was left when its main process ended{run.verdict === 'lost' ? ', or Warden could not see it' : ''}.</p>
      ) : (
        <>
          <dl className="rd-facts">
            <dt>Took</dt>
            <dd>{duration(t.elapsedMs)}</dd>
            <dt>Killed</dt>
            {/* "Nothing was left" only where every step looked everywhere; an incomplete look found nothing, no more. */}
            <dd data-testid="teardown-killed">{t.killed.length > 0 ? t.killed.length : t.complete ? 'none: nothing was left' : 'none found where it could look'}</dd>
            <dt>Survivors</dt>
            <dd className={t.survivors.length > 0 ? 'rd-fail-text' : undefined}>{t.survivors.length === 0 ? 'none' : t.survivors.length}</dd>
            <dt>Complete</dt>
            <dd>{t.complete ? 'yes: every step looked everywhere' : t.unseen ? `no: ${t.unseen}` : 'no: the budget ran out or a step could not look everywhere'}</dd>
          </dl>
          {t.survivors.length > 0 && (
            <>
              <h4 className="rd-fail-text">Survivors: still running</h4>
              <ProcList procs={t.survivors} />
            </>
          )}
          {t.killed.length > 0 && (
            <>
              <h4>Killed</h4>
              <ProcList procs={t.killed} />
            </>
          )}
        </>
      )}
    </section>
  );
}
