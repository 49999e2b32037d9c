// New run: a command (split into argv words like a shell would, or one
// /bin/sh -c line when Shell is ticked) or a Python script in a session, with
// its limit, grace and memory limit. Defaults come from Settings; the last
// values started are remembered in this browser.

import { LOCAL_HOST } from '../../../../shared/hosts';
import { useEffect, useMemo, useRef, useState, type FormEvent, type KeyboardEvent } from 'react';
import { hrefOf, navigate } from '../../router';
import { messageOf, useWarden } from '../../store';
import { FormRow } from '../../components/FormRow';
import { durationText } from '../../components/form-fields';
import { rememberGrace } from '../../components/grace';
import { readStored, writeStored } from '../../components/hooks';
import { checkDraft, commandExtras, defaultsFor, EMPTY_DRAFT, NEW_RUN_KEY, restoreDraft, settingsDefaults, type CommandExtras, type DefaultedField, type Draft } from './model';
import '../../components/form.css';
import './new-run.css';

const MAX_CHIPS = 24;
const DEFAULTED: DefaultedField[] = ['limit', 'grace', 'memory'];

export function NewRunView() {
  const api = useWarden((s) => s.api);
  const offline = useWarden((s) => s.connection !== 'online');
  const put = useWarden((s) => s.put);
  const report = useWarden((s) => s.report);
  const remembered = useMemo(() => restoreDraft(readStored<Record<string, unknown>>(NEW_RUN_KEY)), []);
  const [draft, setDraft] = useState<Draft>(() => ({ ...EMPTY_DRAFT, ...remembered }));
  const [defaults, setDefaults] = useState<Pick<Draft, DefaultedField> | null>(null);
  const [extras, setExtras] = useState<CommandExtras>({});
  const [busy, setBusy] = useState(false);
  // Which host runs it: this machine's, or a remote the local host relays (src/shared/hosts.ts).
  const hosts = useWarden((s) => s.hosts);
  const [target, setTarget] = useState(LOCAL_HOST);
  const targetState = hosts.find((h) => h.name === target)?.state ?? 'connected';
  const [error, setError] = useState<string | null>(null);
  const touched = useRef(new Set<keyof Draft>(Object.keys(remembered) as (keyof Draft)[]));

  useEffect(() => {
    if (!api) return undefined;
    let live = true;
    api.settings().then(
      (settings) => {
        if (!live) return;
        const next = settingsDefaults(settings);
        setDefaults(next);
        setExtras(commandExtras(settings));
        // Defaults fill only what was neither remembered nor typed meanwhile.
        setDraft((d) => {
          const filled = { ...d };
          const wanted = defaultsFor(d.kind, next);
          for (const key of DEFAULTED) if (!touched.current.has(key)) filled[key] = wanted[key];
          return filled;
        });
      },
      (e: unknown) => live && report(`Could not load the defaults from Settings: ${messageOf(e)}`),
    );
    return () => {
      live = false;
    };
  }, [api, report]);

  const checked = useMemo(() => checkDraft(draft, extras), [draft, extras]);
  const set = <K extends keyof Draft>(key: K, value: Draft[K]) => {
    touched.current.add(key);
    setError(null);
    setDraft((d) => {
      const next = { ...d, [key]: value };
      // Switching kind moves an untouched grace to the new kind's default.
      if (key === 'kind' && defaults && !touched.current.has('grace')) next.grace = defaultsFor(next.kind, defaults).grace;
      return next;
    });
  };

  const submit = async (event?: FormEvent) => {
    event?.preventDefault();
    if (!api || !checked.request || busy) return;
    setBusy(true);
    setError(null);
    try {
      const result = target === LOCAL_HOST ? await api.start(checked.request) : await api.start(checked.request, { host: target });
      if (checked.graceMs !== undefined) rememberGrace(result.id, checked.graceMs);
      put(result);
      writeStored(NEW_RUN_KEY, draft);
      navigate({ view: 'run', id: result.id, tab: null });
    } catch (e) {
      setError(messageOf(e));
      setBusy(false);
    }
  };

  const onKeyDown = (event: KeyboardEvent) => {
    if (event.key === 'Enter' && (event.ctrlKey || event.metaKey)) {
      event.preventDefault();
      void submit();
    }
  };

  const resetDefaults = () => {
    if (!defaults) return;
    for (const key of DEFAULTED) touched.current.delete(key);
    setDraft((d) => ({ ...d, ...defaultsFor(d.kind, defaults) }));
  };
  const differsFromDefaults = defaults !== null && DEFAULTED.some((key) => draft[key] !== defaultsFor(draft.kind, defaults)[key]);
  const python = draft.kind === 'python';
  const missing = python ? draft.code.trim() === '' : draft.command.trim() === '';

  return (
    <section className="view form-view">
      <form className="form-card" data-testid="new-run-form" onSubmit={submit} onKeyDown={onKeyDown} noValidate>
        <header className="form-head">
          <h1>New run</h1>
          <p className="muted">Runs under a limit with its output kept; you land on its live output.</p>
        </header>

        <fieldset className="form-section">
          <legend>What to run</legend>
          {hosts.length > 1 && (
            <FormRow
              label="Host"
              htmlFor="nr-host"
              hint={target === LOCAL_HOST ? 'This machine.' : `On ${target}, through this host's link to it: the working directory and environment are that machine's.`}
              error={targetState === 'connected' ? undefined : `${target} cannot be reached now (${targetState}); Warden reconnects by itself.`}
            >
              <select id="nr-host" data-testid="new-run-host" value={target} onChange={(e) => setTarget(e.target.value)}>
                {hosts.map((h) => (
                  <option key={h.name} value={h.name}>
                    {h.name}
                    {h.local ? ' (this machine)' : h.state === 'connected' ? '' : ` (${h.state})`}
                  </option>
                ))}
              </select>
            </FormRow>
          )}
          <FormRow label="Kind" htmlFor="nr-kind">
            <select id="nr-kind" data-testid="new-run-kind" value={draft.kind} onChange={(e) => set('kind', e.target.value as Draft['kind'])}>
              <option value="command">Command</option>
              <option value="python">Python script</option>
            </select>
          </FormRow>

          {!python && (
            <FormRow
              label="Command"
              htmlFor="nr-command"
              error={checked.errors.command}
              hint={
                draft.shell ? (
                  <>
                    Runs as one line through <code>/bin/sh -c</code>: pipes, globs and $VARS work.
                  </>
                ) : checked.shellSyntax ? (
                  <span className="form-warn">
                    <code>{checked.shellSyntax}</code> means something to a shell, but here it is passed as a plain argument. Tick Shell to run the line through /bin/sh.
                  </span>
                ) : (
                  <>Split into words like a shell does (quotes and backslashes work); nothing is expanded.</>
                )
              }
            >
              <div className="form-inline">
                <input
                  id="nr-command"
                  className="form-mono form-grow"
                  data-testid="new-run-command"
                  value={draft.command}
                  onChange={(e) => set('command', e.target.value)}
                  placeholder={draft.shell ? "grep -r TODO src | wc -l" : 'python3 train.py --epochs 3'}
                  spellCheck={false}
                  autoComplete="off"
                  autoFocus
                  aria-invalid={checked.errors.command ? true : undefined}
                />
                <label className="form-check">
                  <input type="checkbox" data-testid="new-run-shell" checked={draft.shell} onChange={(e) => set('shell', e.target.checked)} />
                  Shell
                </label>
              </div>
              {!draft.shell && checked.argv.length > 0 && (
                <div className="nr-argv" aria-label="Arguments">
                  {checked.argv.slice(0, MAX_CHIPS).map((word, i) => (
                    <code key={i} className="nr-chip" title={`argv[${i}]`}>
                      {word === '' ? '""' : word}
                    </code>
                  ))}
                  {checked.argv.length > MAX_CHIPS && <span className="muted">+{checked.argv.length - MAX_CHIPS} more</span>}
                </div>
              )}
            </FormRow>
          )}

          {python && (
            <>
              <FormRow label="Script" htmlFor="nr-code" hint="Runs in the session's persistent globals; top-level await works. Ctrl+Enter starts it.">
                <textarea
                  id="nr-code"
                  className="form-mono nr-code"
                  data-testid="new-run-code"
                  value={draft.code}
                  onChange={(e) => set('code', e.target.value)}
                  placeholder={'import time\nfor i in range(10):\n    print(i)\n    time.sleep(1)'}
                  rows={8}
                  spellCheck={false}
                  autoFocus
                />
              </FormRow>
              <FormRow label="Session" htmlFor="nr-session" error={checked.errors.session} hint="Scripts in one session share variables and run one at a time.">
                <input
                  id="nr-session"
                  className="form-mono"
                  data-testid="new-run-session"
                  value={draft.session}
                  onChange={(e) => set('session', e.target.value)}
                  placeholder="default"
                  spellCheck={false}
                  autoComplete="off"
                  aria-invalid={checked.errors.session ? true : undefined}
                />
              </FormRow>
            </>
          )}

          <FormRow label="Working directory" htmlFor="nr-cwd" hint={python ? "Used when the session's interpreter starts." : undefined}>
            <input
              id="nr-cwd"
              className="form-mono form-grow"
              data-testid="new-run-cwd"
              value={draft.cwd}
              onChange={(e) => set('cwd', e.target.value)}
              placeholder="the host's working directory"
              spellCheck={false}
              autoComplete="off"
            />
          </FormRow>
        </fieldset>

        <fieldset className="form-section">
          <legend>
            Limits
            {differsFromDefaults && (
              <button type="button" className="form-link" onClick={resetDefaults} data-testid="new-run-defaults">
                Use Settings defaults
              </button>
            )}
          </legend>
          <FormRow label="Time limit" htmlFor="nr-limit" error={checked.errors.limit} hint="Such as 30s, 1.5m or 2h. Empty: no limit.">
            <input id="nr-limit" className="form-short" data-testid="new-run-limit" value={draft.limit} onChange={(e) => set('limit', e.target.value)} placeholder="none" aria-invalid={checked.errors.limit ? true : undefined} />
          </FormRow>
          <FormRow label="Grace" htmlFor="nr-grace" error={checked.errors.grace} hint={python ? 'From the limit (or a stop) to SIGKILL, which also ends the interpreter. Empty: 10 s.' : 'From the limit (or a stop) to SIGKILL; SIGINT first, SIGTERM 2 s later.'}>
            <input id="nr-grace" className="form-short" data-testid="new-run-grace" value={draft.grace} onChange={(e) => set('grace', e.target.value)} placeholder={python ? '10s' : '5s'} aria-invalid={checked.errors.grace ? true : undefined} />
          </FormRow>
          <FormRow label="Memory limit" htmlFor="nr-memory" error={checked.errors.memory} hint={python ? 'Such as 512M or 2G (powers of 1024; 2Gi the same); set when the interpreter starts. Empty: none.' : 'Such as 512M or 2G (powers of 1024; 2Gi the same). Empty: none.'}>
            <input id="nr-memory" className="form-short" data-testid="new-run-memory" value={draft.memory} onChange={(e) => set('memory', e.target.value)} placeholder="none" aria-invalid={checked.errors.memory ? true : undefined} />
          </FormRow>
          {!python && (
            <FormRow label="Core dump" htmlFor="nr-core" hint="A crash leaves a core dump where core_pattern says: the run's core file size limit is raised to the hard limit, whatever the host's is (warden run --core).">
              <label className="form-check">
                <input id="nr-core" type="checkbox" data-testid="new-run-core" checked={draft.core} onChange={(e) => set('core', e.target.checked)} />
                Allow a core dump
              </label>
            </FormRow>
          )}
          {!python && extras.drainMs !== undefined && extras.teardownBudgetMs !== undefined && (
            <p className="form-note muted">
              Output drain {durationText(extras.drainMs)} and teardown budget {durationText(extras.teardownBudgetMs)} come from <a href={hrefOf({ view: 'settings' })}>Settings</a>.
            </p>
          )}
        </fieldset>

        <footer className="form-foot">
          <div className="form-status">
            {error && (
              <p className="form-error" role="alert" data-testid="new-run-error">
                {error}
              </p>
            )}
            {!error && missing && <p className="muted">{python ? 'Write a script to run.' : 'Type a command to run.'}</p>}
          </div>
          <button type="submit" className="primary" data-testid="new-run-submit" disabled={!checked.request || busy || !api || offline}>
            {busy ? 'Starting…' : 'Start run'}
          </button>
        </footer>
      </form>
    </section>
  );
}
