// Settings: the New run form's defaults and the history's retention, kept by
// the host. Saved whole; the host checks them and its one-line reason for a
// refusal is shown as it says it.

import { useEffect, useMemo, useState, type FormEvent, type ReactNode } from 'react';
import { DEFAULT_SETTINGS } from '../../../../shared/settings';
import { bytes as formatBytes, clock } from '../../format';
import { messageOf, useWarden } from '../../store';
import { FormRow } from '../../components/FormRow';
import { setLeaveGuard } from '../../components/leave-guard';
import { parseSize } from '../../components/form-fields';
import { readSettingsDraft, settingsDraft, type SettingsDraft } from './model';
import '../../components/form.css';
import './settings.css';

type Status = { kind: 'loading' } | { kind: 'load-failed'; message: string } | { kind: 'idle' } | { kind: 'saving' } | { kind: 'saved'; at: string } | { kind: 'error'; message: string };

export function SettingsView() {
  const api = useWarden((s) => s.api);
  const offline = useWarden((s) => s.connection !== 'online');
  const [stored, setStored] = useState<SettingsDraft | null>(null);
  const [draft, setDraft] = useState<SettingsDraft>(() => settingsDraft(DEFAULT_SETTINGS));
  const [status, setStatus] = useState<Status>({ kind: 'loading' });

  useEffect(() => {
    if (!api) return undefined;
    let live = true;
    api.settings().then(
      (settings) => {
        if (!live) return;
        const text = settingsDraft(settings);
        setStored(text);
        setDraft(text);
        setStatus({ kind: 'idle' });
      },
      (e: unknown) => live && setStatus({ kind: 'load-failed', message: `Could not load the settings: ${messageOf(e)}` }),
    );
    return () => {
      live = false;
    };
  }, [api]);

  const read = useMemo(() => readSettingsDraft(draft), [draft]);
  const errors = read.errors ?? {};
  const dirty = stored !== null && (Object.keys(draft) as (keyof SettingsDraft)[]).some((key) => draft[key] !== stored[key]);
  const loading = status.kind === 'loading';

  // Leaving with unsaved changes asks first; closing or reloading the page asks the browser's question.
  useEffect(() => {
    if (!dirty) return undefined;
    setLeaveGuard(() => window.confirm('Settings has unsaved changes. Leave and drop them?'));
    return () => setLeaveGuard(null);
  }, [dirty]);

  const set = (key: keyof SettingsDraft, value: string) => {
    setDraft((d) => ({ ...d, [key]: value }));
    if (status.kind === 'saved' || status.kind === 'error') setStatus({ kind: 'idle' });
  };

  const save = async (event: FormEvent) => {
    event.preventDefault();
    if (!api || !read.settings || status.kind === 'saving') return;
    setStatus({ kind: 'saving' });
    try {
      const saved = await api.saveSettings(read.settings);
      const text = settingsDraft(saved);
      setStored(text);
      setDraft(text);
      setStatus({ kind: 'saved', at: new Date().toISOString() });
    } catch (e) {
      setStatus({ kind: 'error', message: messageOf(e) });
    }
  };

  const defaults = settingsDraft(DEFAULT_SETTINGS);
  const atDefaults = (Object.keys(defaults) as (keyof SettingsDraft)[]).every((key) => draft[key] === defaults[key]);
  const field = (key: keyof SettingsDraft, testId: string, placeholder: string) => (
    <input
      id={`st-${key}`}
      className="form-short"
      data-testid={testId}
      value={draft[key]}
      onChange={(e) => set(key, e.target.value)}
      placeholder={placeholder}
      disabled={loading}
      spellCheck={false}
      autoComplete="off"
      aria-invalid={errors[key] ? true : undefined}
    />
  );
  const sizeHint = (text: string, base: ReactNode): ReactNode => {
    const n = parseSize(text);
    return n !== undefined && text.trim() !== '' && !/^\s*\d+\s*$/.test(text) ? (
      <>
        {base} <span className="st-equals">= {formatBytes(n)}</span>
      </>
    ) : (
      base
    );
  };

  return (
    <section className="view form-view">
      <form className="form-card" data-testid="settings-form" onSubmit={save} noValidate aria-busy={loading}>
        <header className="form-head">
          <h1>Settings</h1>
          <p className="muted">
            Kept by the host in its state directory: every window and <code>warden serve</code> page sees the same.
          </p>
        </header>

        <fieldset className="form-section">
          <legend>New run defaults</legend>
          <FormRow label="Default limit" htmlFor="st-limit" error={errors.limit} hint="The time limit a new run starts with. Empty: no limit.">
            {field('limit', 'settings-limit', 'none')}
          </FormRow>
          <FormRow label="Grace" htmlFor="st-grace" error={errors.grace} hint="From the limit (or a stop) to SIGKILL, for commands; a Python script keeps its 10 s.">
            {field('grace', 'settings-grace', '5s')}
          </FormRow>
          <FormRow label="Memory limit" htmlFor="st-memory" error={errors.memory} hint={sizeHint(draft.memory, 'Such as 512M or 2G (powers of 1024; 2Gi the same). Empty: none.')}>
            {field('memory', 'settings-memory', 'none')}
          </FormRow>
          <FormRow label="Drain bound" htmlFor="st-drain" error={errors.drain} hint="How long output a leftover process holds open is read after the command exits.">
            {field('drain', 'settings-drain', '2s')}
          </FormRow>
          <FormRow label="Teardown budget" htmlFor="st-teardown" error={errors.teardown} hint="How long ending a run's leftover processes may take.">
            {field('teardown', 'settings-teardown', '10s')}
          </FormRow>
        </fieldset>

        <fieldset className="form-section">
          <legend>History retention</legend>
          <FormRow label="Runs kept" htmlFor="st-maxRuns" error={errors.maxRuns} hint="The oldest ended runs beyond this are deleted.">
            {field('maxRuns', 'settings-retention-runs', '50000')}
          </FormRow>
          <FormRow label="Output kept" htmlFor="st-maxBytes" error={errors.maxBytes} hint={sizeHint(draft.maxBytes, 'Total size of stored output, such as 2Gi. At least 1Mi.')}>
            {field('maxBytes', 'settings-retention-bytes', '2Gi')}
          </FormRow>
        </fieldset>

        <footer className="form-foot">
          <div className="form-status" aria-live="polite">
            {status.kind === 'loading' && <p className="muted">Loading…</p>}
            {status.kind === 'load-failed' && (
              <p className="form-error" role="alert" data-testid="settings-error">
                {status.message}
              </p>
            )}
            {status.kind === 'error' && (
              <p className="form-error" role="alert" data-testid="settings-error">
                {status.message}
              </p>
            )}
            {status.kind === 'saved' && (
              <p className="st-saved" data-testid="settings-saved">
                <span aria-hidden="true">✓</span> Saved at {clock(status.at)}.
              </p>
            )}
            {status.kind === 'idle' && dirty && <p className="muted">Unsaved changes.</p>}
          </div>
          <div className="st-actions">
            <button type="button" onClick={() => setDraft(defaults)} disabled={loading || atDefaults} data-testid="settings-defaults">
              Restore defaults
            </button>
            <button type="submit" className="primary" data-testid="settings-save" disabled={loading || !api || offline || !read.settings || status.kind === 'saving'}>
              {status.kind === 'saving' ? 'Saving…' : 'Save'}
            </button>
          </div>
        </footer>
      </form>
    </section>
  );
}
