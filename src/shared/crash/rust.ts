// A Rust panic: "thread 'main' panicked at src/main.rs:3:27:" and the message
// on the lines after it (Rust 1.73 on; 1.9x adds the thread's id), or
// "thread 'main' panicked at 'message', src/main.rs:3:27" (before 1.73); then
// a note, or with RUST_BACKTRACE a backtrace whose frames name their place on
// an "at" line below them.

import type { Found, FoundFrame, LanguageScan } from './report';

const HEAD = /^thread '([^']*)'(?: \(\d+\))? panicked at (.+?):(\d+):(\d+):$/;
const OLD_HEAD = /^thread '([^']*)'(?: \(\d+\))? panicked at '(.*)', (.+?):(\d+):(\d+)$/;
const BACKTRACE = /^stack backtrace:$/;
const SYMBOL = /^\s+\d+: (.+)$/;
const PLACE = /^\s+at (.+?):(\d+):(\d+)$/;

/** The standard library (/rustc/HASH/library/...) and crates from a registry or git are not the user's code. */
export function isRustUserFile(file: string): boolean {
  return !/^\/rustc\/|\/\.cargo\/(?:registry|git)\/|^library\/(?:std|core|alloc|panic_\w+)\//.test(file);
}

export const scanRust: LanguageScan = (lines) => {
  let last: Found | null = null;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const head = HEAD.exec(line);
    const old = head ? null : OLD_HEAD.exec(line);
    if (!head && !old) continue;
    const [file, row, col] = head ? [head[2]!, head[3]!, head[4]!] : [old![3]!, old![4]!, old![5]!];
    const frames: FoundFrame[] = [];
    let end = i;
    let errorAt = i;
    let error = old ? old[2]! : '';
    if (head) {
      // The message: to a note, a backtrace, a blank line or the next panic.
      for (let j = i + 1; j < lines.length && lines[j] !== '' && !/^note: /.test(lines[j]!) && !BACKTRACE.test(lines[j]!) && !HEAD.test(lines[j]!); j++) {
        if (j === i + 1) {
          errorAt = j;
          error = lines[j]!;
        }
        end = j;
      }
    }
    for (let j = end + 1; j < lines.length; j++) {
      const next = lines[j]!;
      if (/^note: /.test(next)) end = j;
      else if (BACKTRACE.test(next)) end = j;
      else if (SYMBOL.test(next) || PLACE.test(next)) {
        const place = PLACE.exec(next);
        const symbol = place ? SYMBOL.exec(lines[j - 1]!) : null;
        if (place) frames.unshift({ file: place[1]!, line: Number(place[2]), column: Number(place[3]), ...(symbol ? { fn: symbol[1]! } : {}), at: j, user: isRustUserFile(place[1]!) });
        end = j;
      } else break;
    }
    // The panic's own place goes innermost: with #[track_caller] it is the caller's line, the one to look at.
    // Its function is the backtrace's frame at the same place, when there is one.
    const named = frames.find((f) => f.fn !== undefined && f.line === Number(row) && f.file.replace(/^\.\//, '') === file.replace(/^\.\//, ''));
    frames.push({ file, line: Number(row), column: Number(col), ...(named ? { fn: named.fn } : {}), at: i, user: isRustUserFile(file) });
    last = { report: { language: 'rust', how: 'panicked', error, errorAt, frames }, start: i, end };
    i = end;
  }
  return last;
};
