// Durations and sizes as the forms (New run, Settings) show and read them:
// "30s", "1.5m", "512Mi", "2G". Parsing matches the engine: parseDuration for
// times, readSize for sizes (src/shared/size.ts: powers of 1024, 2G and 2Gi
// both 2 GiB; a plain number is bytes).

import { parseDuration } from '../../../shared/duration';
import { readSize, sizeText } from '../../../shared/size';

export { sizeText };

/** Bytes, or undefined when the text is not a size. */
export function parseSize(text: string): number | undefined {
  const read = readSize(text);
  return read.ok ? read.bytes : undefined;
}

/** The shortest exact text of a duration: 90000 -> "90s", 120000 -> "2m", 1500 -> "1500ms". */
export function durationText(ms: number): string {
  if (ms > 0 && ms % 3_600_000 === 0) return `${ms / 3_600_000}h`;
  if (ms > 0 && ms % 60_000 === 0) return `${ms / 60_000}m`;
  if (ms % 1000 === 0) return `${ms / 1000}s`;
  return `${ms}ms`;
}

export type Field<T> = { value: T; error: null } | { value: undefined; error: string };

/** A duration field in ms. Empty is null ("none") when optional, else an error. */
export function durationField(text: string, options: { label: string; optional?: boolean; positive?: boolean }): Field<number | null> {
  if (text.trim() === '') {
    return options.optional ? { value: null, error: null } : { value: undefined, error: `${options.label} is required, e.g. 5s.` };
  }
  const ms = parseDuration(text);
  if (ms === undefined) return { value: undefined, error: `${options.label}: "${text.trim()}" is not a duration such as 500ms, 30s, 1.5m or 2h.` };
  if (options.positive && ms <= 0) return { value: undefined, error: `${options.label} must be more than 0.` };
  return { value: ms, error: null };
}

/** A size field in bytes. Empty is null ("none") when optional, else an error. */
export function sizeField(text: string, options: { label: string; optional?: boolean }): Field<number | null> {
  if (text.trim() === '') {
    return options.optional ? { value: null, error: null } : { value: undefined, error: `${options.label} is required, e.g. 2Gi.` };
  }
  const read = readSize(text.trim());
  if (!read.ok) return { value: undefined, error: `${options.label} ${read.why}.` };
  return { value: read.bytes, error: null };
}

/** A whole-number field (at least 1). */
export function countField(text: string, options: { label: string }): Field<number> {
  const trimmed = text.trim().replace(/[_,\s]/g, '');
  if (!/^\d+$/.test(trimmed)) return { value: undefined, error: `${options.label} must be a whole number, such as 50000.` };
  const n = Number(trimmed);
  if (!Number.isSafeInteger(n) || n < 1) return { value: undefined, error: `${options.label} must be at least 1.` };
  return { value: n, error: null };
}
