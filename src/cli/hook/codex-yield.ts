// Codex's exec_command returns to its model after `yield_time_ms` (10 s
// unless the model asks otherwise) with whatever the command printed so far,
// and its PreToolUse hook input carries only the command, not that time. A
// `warden run --yield` longer than it answers after Codex has already shown
// the model an empty chunk. The call's own arguments are in the session's
// transcript (transcript_path), written before the hook runs: the hook reads
// the call by its id and yields well before Codex would.

import { closeSync, fstatSync, openSync, readSync } from 'node:fs';

/** The most of a transcript's end the hook reads: its newest calls are there. */
const TAIL_BYTES = 256 * 1024;

/** yield_time_ms of the function call callId in transcript lines (JSONL), or undefined. */
export function askedYieldMs(text: string, callId: string): number | undefined {
  const needle = `"call_id":${JSON.stringify(callId)}`;
  const lines = text.split('\n');
  for (let i = lines.length - 1; i >= 0; i--) {
    const line = lines[i]!;
    if (!line.includes(needle) || !line.includes('"function_call"')) continue;
    try {
      const item = JSON.parse(line) as { payload?: { type?: unknown; call_id?: unknown; arguments?: unknown } };
      const payload = item.payload;
      if (payload?.type !== 'function_call' || payload.call_id !== callId || typeof payload.arguments !== 'string') continue;
      const asked = (JSON.parse(payload.arguments) as { yield_time_ms?: unknown }).yield_time_ms;
      return typeof asked === 'number' && Number.isFinite(asked) && asked >= 0 ? asked : undefined;
    } catch {
      // A line cut at the tail's start, or not JSON: not the call.
    }
  }
  return undefined;
}

/**
 * Warden's yield for a Codex call that returns to its model after askedMs:
 * the usual 6 s when the call asked for Codex's default or more, and earlier
 * below it, leaving room for a slow start (a loaded machine took 2.2 s more
 * than the yield to answer): at most 60 % of it and 4 s short of it, never
 * under 250 ms; at most 50 s, like the other harnesses' yields.
 */
export function codexYieldMs(askedMs: number | undefined, usualMs: number): number {
  if (askedMs === undefined) return usualMs;
  const early = Math.min(askedMs * 0.6, askedMs - 4000);
  return Math.round(Math.min(50_000, Math.max(250, askedMs >= 10_000 ? Math.max(usualMs, early) : Math.min(usualMs, early))));
}

/** The end of a file (at most TAIL_BYTES), or '' when it cannot be read. */
export function readTail(path: string): string {
  let fd: number | undefined;
  try {
    fd = openSync(path, 'r');
    const size = fstatSync(fd).size;
    const length = Math.min(size, TAIL_BYTES);
    const buffer = Buffer.alloc(length);
    readSync(fd, buffer, 0, length, size - length);
    return buffer.toString('utf8');
  } catch {
    return '';
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}
