// The New run form's model: what the fields hold, what they are checked for,
// and the RunRequest they make. Pure, so it is tested without a page.

import type { CommandRunRequest, PythonRunRequest, RunRequest } from '../../../../shared/request';
import type { Settings } from '../../../../shared/settings';
import { splitArgv } from './argv';
import { durationField, durationText, sizeField } from '../../components/form-fields';

/** The same rule as SESSION_NAME in shared/schemas.ts (not imported: that module brings zod into the page). */
export const SESSION_NAME = /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}$/;

export const NEW_RUN_KEY = 'warden.newRun';

export interface Draft {
  kind: 'command' | 'python';
  command: string;
  shell: boolean;
  code: string;
  session: string;
  cwd: string;
  limit: string;
  grace: string;
  memory: string;
  /** A command's core dumps allowed (its core file size limit raised to the hard one: warden run --core). */
  core: boolean;
}

export const EMPTY_DRAFT: Draft = { kind: 'command', command: '', shell: false, code: '', session: '', cwd: '', limit: '', grace: '', memory: '', core: false };

/** The fields Settings gives defaults for. */
export type DefaultedField = 'limit' | 'grace' | 'memory';

export function settingsDefaults(settings: Settings): Pick<Draft, DefaultedField> {
  return {
    limit: settings.defaultLimitMs === null ? '' : durationText(settings.defaultLimitMs),
    grace: durationText(settings.graceMs),
    memory: settings.memory ?? '',
  };
}

/**
 * The defaulted fields for a kind. Settings have one grace, meant for commands;
 * a Python script's grace stays empty (the engine's 10 s), since killing it also
 * ends its interpreter and the session's variables.
 */
export function defaultsFor(kind: Draft['kind'], defaults: Pick<Draft, DefaultedField>): Pick<Draft, DefaultedField> {
  return kind === 'python' ? { ...defaults, grace: '' } : defaults;
}

/** A remembered draft from storage, each field checked for its type (storage is not trusted). */
export function restoreDraft(stored: Record<string, unknown>): Partial<Draft> {
  const out: Partial<Draft> = {};
  if (stored.kind === 'command' || stored.kind === 'python') out.kind = stored.kind;
  if (typeof stored.shell === 'boolean') out.shell = stored.shell;
  if (typeof stored.core === 'boolean') out.core = stored.core;
  for (const key of ['command', 'code', 'session', 'cwd', 'limit', 'grace', 'memory'] as const) {
    const value = stored[key];
    if (typeof value === 'string') out[key] = value;
  }
  return out;
}

export interface Checked {
  /** The request to send; null while a field is wrong or what to run is missing. */
  request: RunRequest | null;
  /** One line per wrong field. */
  errors: Partial<Record<'command' | 'session' | 'limit' | 'grace' | 'memory', string>>;
  /** The words the command splits into (command kind, without shell). */
  argv: string[];
  /** A shell metacharacter the command has while Shell is off, to suggest the box. */
  shellSyntax: string | null;
  /** The grace the request names, to count down to SIGKILL exactly. */
  graceMs: number | undefined;
}

/** What Settings add to a command request that the form has no field for. */
export type CommandExtras = Pick<CommandRunRequest, 'drainMs' | 'teardownBudgetMs'>;

export function commandExtras(settings: Settings): CommandExtras {
  return { drainMs: settings.drainMs, teardownBudgetMs: settings.teardownBudgetMs };
}

export function checkDraft(draft: Draft, extras: CommandExtras = {}): Checked {
  const errors: Checked['errors'] = {};
  const limit = durationField(draft.limit, { label: 'Limit', optional: true, positive: true });
  const grace = durationField(draft.grace, { label: 'Grace', optional: true });
  const memory = sizeField(draft.memory, { label: 'Memory limit', optional: true });
  if (limit.error) errors.limit = limit.error;
  if (grace.error) errors.grace = grace.error;
  if (memory.error) errors.memory = memory.error;

  const common = {
    ...(limit.value != null ? { limitMs: limit.value } : {}),
    ...(grace.value != null ? { graceMs: grace.value } : {}),
    ...(memory.value != null ? { memory: draft.memory.trim() } : {}),
    ...(draft.cwd.trim() ? { cwd: draft.cwd.trim() } : {}),
  };
  const graceMs = grace.value ?? undefined;

  if (draft.kind === 'python') {
    const session = draft.session.trim();
    if (session && !SESSION_NAME.test(session)) errors.session = "A session name is 1 to 64 letters, digits, '_', '.' or '-', starting with a letter, digit or '_'.";
    const ok = Object.keys(errors).length === 0 && draft.code.trim() !== '';
    const request: PythonRunRequest = { code: draft.code, ...(session ? { session } : {}), ...common };
    return { request: ok ? request : null, errors, argv: [], shellSyntax: null, graceMs };
  }

  if (draft.shell) {
    const line = draft.command.trim();
    const ok = Object.keys(errors).length === 0 && line !== '';
    const request: CommandRunRequest = { argv: [line], shell: true, ...common, ...(draft.core ? { core: true } : {}), ...extras };
    return { request: ok ? request : null, errors, argv: [], shellSyntax: null, graceMs };
  }

  const split = splitArgv(draft.command);
  if (!split.ok) errors.command = split.error;
  const argv = split.ok ? split.argv : [];
  const ok = Object.keys(errors).length === 0 && argv.length > 0;
  const request: CommandRunRequest = { argv, ...common, ...(draft.core ? { core: true } : {}), ...extras };
  return { request: ok ? request : null, errors, argv, shellSyntax: split.ok ? split.shellSyntax : null, graceMs };
}
