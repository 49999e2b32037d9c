// The descriptors a supervisor keeps for itself. Every run holds a few (its
// pipes, a subreaper's status pipe), teardown and the sampler read /proc
// (bounded: procfs.ts), and the host needs some for its own sockets, its
// clients and its history store. A table filled by runs leaves the host unable
// to answer or to record, so new runs are refused, with a reason, while fewer
// than the reserve would be left: the runs already started go on.
//
// The count is /proc/self/fd, read at most every COUNT_EVERY_MS; between two
// reads each run started counts as PER_RUN more, so a burst of starts cannot
// overshoot between counts.

import { readdirSync, readFileSync } from 'node:fs';

const COUNT_EVERY_MS = 25;
/** What one run may take at its start: stdout, stderr, stdin and a status pipe, both ends while spawning. */
const PER_RUN = 8;

export interface DescriptorCheck {
  /** Why a new run is refused now, or undefined when it may start. */
  refusal(): string | undefined;
  /** The figures behind it (for GET /host and the bench). */
  figures(): { open: number; limit: number; reserve: number } | null;
}

/** The soft RLIMIT_NOFILE of this process; null where it cannot be read (no /proc, or unlimited). */
export function descriptorLimit(): number | null {
  try {
    const soft = /^Max open files\s+(\S+)/m.exec(readFileSync('/proc/self/limits', 'latin1'))?.[1];
    const value = Number(soft);
    return Number.isSafeInteger(value) && value > 0 ? value : null;
  } catch {
    return null;
  }
}

/** Descriptors this process holds now (the directory's own included); null where /proc/self/fd cannot be read. */
export function openDescriptors(): number | null {
  try {
    return readdirSync('/proc/self/fd').length;
  } catch {
    return null;
  }
}

/** The reserve for a limit: a tenth of it, at least 64 and at most 1024. */
export function reserveFor(limit: number): number {
  return Math.min(1024, Math.max(64, Math.floor(limit / 10)));
}

export function descriptorCheck(options: { limit?: number | null; reserve?: number } = {}): DescriptorCheck {
  let limit = options.limit === undefined ? descriptorLimit() : options.limit;
  let countedAt = -Infinity;
  let open = 0;
  let startedSince = 0;
  let wasLow = false;
  const reserve = () => (limit === null ? 0 : (options.reserve ?? reserveFor(limit)));
  return {
    refusal() {
      if (limit === null) return undefined;
      const now = performance.now();
      if (now - countedAt >= COUNT_EVERY_MS || wasLow) {
        const counted = openDescriptors();
        if (counted === null) return undefined;
        open = counted;
        startedSince = 0;
        countedAt = now;
        // The limit can be raised on a live process (prlimit); read it again when it matters.
        if (open + PER_RUN > limit - reserve()) limit = descriptorLimit() ?? limit;
      }
      const estimate = open + startedSince * PER_RUN;
      wasLow = estimate + PER_RUN > limit - reserve();
      if (wasLow) {
        return `Warden is low on file descriptors: about ${estimate} of its ${limit} (RLIMIT_NOFILE) are open, and it keeps ${reserve()} for its own sockets and history, so it takes no new run now; the runs already started go on. Try again when some have ended, or raise the limit (ulimit -n).`;
      }
      startedSince += 1;
      return undefined;
    },
    figures() {
      if (limit === null) return null;
      return { open: openDescriptors() ?? open, limit, reserve: reserve() };
    },
  };
}
