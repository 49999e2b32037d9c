// The Settings form's model: Settings as the text fields show them, and back.
// Each field is checked in the form, against the same ranges the host's schema
// holds (settingsSchema in shared/schemas.ts; not imported, which would bring
// zod into the page: the test holds the two together), so a refusal is marked
// on its field, not reported raw after a round trip.

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

/** The least output the history may keep (the host refuses less). */
export const MIN_OUTPUT_KEPT = 1024 * 1024;

/** The Settings the fields say, or the error of each field that does not read or is out of range. */
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
  else if (maxBytes.value !== null && maxBytes.value !== undefined && maxBytes.value < MIN_OUTPUT_KEPT) errors.maxBytes = 'Output kept must be at least 1Mi (1 MiB).';
  else if (maxBytes.value !== null && maxBytes.value !== undefined && !Number.isInteger(maxBytes.value)) errors.maxBytes = 'Output kept must be a whole number of bytes, such as 2Gi or 1536Mi.';
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
