// Binary search over a list of numbers in ascending order, written once for
// the places that ask "which entry holds this position": a run's output
// marks (output-times.ts) and line starts (host/output-page.ts, the log's
// rows). The search's scanner (host/search/scan.ts) keeps its own: it runs
// from its own source text in a worker and may import nothing.

/** The index of the last of the first `count` entries of `sorted` that is at most `value`, or -1 when none is. */
export function lastAtOrBefore(sorted: ArrayLike<number>, value: number, count: number = sorted.length): number {
  let lo = 0;
  let hi = count - 1;
  let found = -1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (sorted[mid]! <= value) {
      found = mid;
      lo = mid + 1;
    } else hi = mid - 1;
  }
  return found;
}
