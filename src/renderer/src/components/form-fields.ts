// Durations and sizes as the forms (New run, Settings) show and read them:
// "30s", "1.5m", "512M", "2G". Parsing matches the engine: parseDuration for
// times, and the grammar of the engine's parseMemory for sizes (K, M, G, T are
// powers of 1024, with or without "B"/"iB"; a plain number is bytes).

import { parseDuration } from '../../../shared/duration';

const SIZE_UNITS: Record<string, number> = { '': 1, k: 1024, m: 1024 ** 2, g: 1024 ** 3, t: 1024 ** 4 };

/** Bytes, or undefined when the text is not a size. */
export function parseSize(text: string): number | undefined {
  const m = /^\s*(\d+(?:\.\d+)?|\.\d+)\s*([kmgt]?)(i?b)?\s*$/i.exec(text);
  if (!m) return undefined;
  const unit = m[2]!.toLowerCase();
  // "5iB" has no unit to be binary: the engine refuses it too.
  if (unit === '' && m[3]?.toLowerCase() === 'ib') return undefined;
  const n = Math.floor(Number(m[1]) * SIZE_UNITS[unit]!);
  return Number.isSafeInteger(n) ? n : undefined;
}

/** The shortest exact text of a duration: 90000 -> "90s", 120000 -> "2m", 1500 -> "1500ms". */
export function durationText(ms: number): string {
  if (ms > 0 && ms % 3_600_000 === 0) return `${ms / 3_600_000}h`;
  if (ms > 0 && ms % 60_000 === 0) return `${ms / 60_000}m`;
  if (ms % 1000 === 0) return `${ms / 1000}s`;
  return `${ms}ms`;
}

/** The shortest exact text of a size: 2147483648 -> "2G", 1536 -> "1536" (1.5K is not exact in the engine's floor). */
export function sizeText(bytes: number): string {
  for (const [unit, factor] of [['T', 1024 ** 4], ['G', 1024 ** 3], ['M', 1024 ** 2], ['K', 1024]] as const) {
    if (bytes > 0 && bytes % factor === 0) return `${bytes / factor}${unit}`;
  }
  return String(bytes);
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
    return options.optional ? { value: null, error: null } : { value: undefined, error: `${options.label} is required, e.g. 2G.` };
  }
  const bytes = parseSize(text);
  if (bytes === undefined) return { value: undefined, error: `${options.label}: "${text.trim()}" is not a size such as 512M, 2G or 1.5GiB.` };
  return { value: bytes, error: null };
}

/** A whole-number field (at least 1). */
export function countField(text: string, options: { label: string }): Field<number> {
  const trimmed = text.trim().replace(/[_,\s]/g, '');
  if (!/^\d+$/.test(trimmed)) return { value: undefined, error: `${options.label} must be a whole number, such as 50000.` };
  const n = Number(trimmed);
  if (!Number.isSafeInteger(n) || n < 1) return { value: undefined, error: `${options.label} must be at least 1.` };
  return { value: n, error: null };
}
