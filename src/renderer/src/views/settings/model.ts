// The Settings form's model: Settings as the text fields show them, and back.
// The form checks only that each field reads (a duration, a size, a count);
// ranges are the host's to judge, and its one-line reason is shown as is.

import type { Settings } from '../../../../shared/settings';
import { countField, durationField, durationText, sizeField, sizeText } from '../../components/form-fields';

export interface SettingsDraft {
  limit: string;
  grace: string;
  memory: string;
  drain: string;
  teardown: string;
  maxRuns: string;
  maxBytes: string;
}

export type SettingsErrors = Partial<Record<keyof SettingsDraft, string>>;

export function settingsDraft(settings: Settings): SettingsDraft {
  return {
    limit: settings.defaultLimitMs === null ? '' : durationText(settings.defaultLimitMs),
    grace: durationText(settings.graceMs),
    memory: settings.memory ?? '',
    drain: durationText(settings.drainMs),
    teardown: durationText(settings.teardownBudgetMs),
    maxRuns: String(settings.retention.maxRuns),
    maxBytes: sizeText(settings.retention.maxBytes),
  };
}

/** The Settings the fields say, or the error of each field that does not read. */
export function readSettingsDraft(draft: SettingsDraft): { settings: Settings; errors: null } | { settings: null; errors: SettingsErrors } {
  const limit = durationField(draft.limit, { label: 'Default limit', optional: true, positive: true });
  const grace = durationField(draft.grace, { label: 'Grace' });
  const memory = sizeField(draft.memory, { label: 'Memory limit', optional: true });
  const drain = durationField(draft.drain, { label: 'Drain bound' });
  const teardown = durationField(draft.teardown, { label: 'Teardown budget' });
  const maxRuns = countField(draft.maxRuns, { label: 'Runs kept' });
  const maxBytes = sizeField(draft.maxBytes, { label: 'Output kept' });

  const errors: SettingsErrors = {};
  if (limit.error) errors.limit = limit.error;
  if (grace.error) errors.grace = grace.error;
  if (memory.error) errors.memory = memory.error;
  if (drain.error) errors.drain = drain.error;
  if (teardown.error) errors.teardown = teardown.error;
  if (maxRuns.error) errors.maxRuns = maxRuns.error;
  if (maxBytes.error) errors.maxBytes = maxBytes.error;
  if (Object.keys(errors).length > 0) return { settings: null, errors };

  return {
    settings: {
      defaultLimitMs: limit.value ?? null,
      graceMs: grace.value!,
      memory: memory.value === null ? null : draft.memory.trim(),
      drainMs: drain.value!,
      teardownBudgetMs: teardown.value!,
      retention: { maxRuns: maxRuns.value!, maxBytes: maxBytes.value! },
    },
    errors: null,
  };
}
