// How long a stream has been, in characters, from the text a result keeps of
// it: the kept text less the engine's "[warden: N characters dropped here]"
// marker, plus the N it stands for. Output events count offsets on the same
// scale, so a client merging a snapshot with the stream knows where the
// snapshot ends.

import { count } from './format';

/** Where kept output leaves characters out: the engine's marker (supervisor/output.ts), the history's (store/rows.ts) and what clients look for. */
export function droppedMarker(chars: number): string {
  return `\n[warden: ${count(chars)} characters dropped here]\n`;
}

export function streamLength(text: string, dropped: number): number {
  if (dropped <= 0) return text.length;
  const marker = droppedMarker(dropped);
  return text.includes(marker) ? text.length - marker.length + dropped : text.length + dropped;
}
