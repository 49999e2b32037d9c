// pytest's report (on stdout): each failure's section ("___ test_missing ___"
// with its "E   " lines and "file:line: Error" places, innermost last), then
// the short test summary ("FAILED t_cfg.py::test_missing - KeyError: ...")
// and the closing count. The first failure listed is the one named; the
// others are counted.

import { isPythonUserFile } from './python';
import type { FoundFrame, LanguageScan } from './report';

const SUMMARY = /^=+ short test summary info =+$/;
const OUTCOME = /^(FAILED|ERROR) (.+?)(?: - (.*))?$/;
const CLOSING = /^(?:=+ )?(?:\d+ (?:failed|passed|errors?|skipped|deselected|xfailed|xpassed|warnings?)(?:, )?)+.* in [\d.]+s(?: \([\d:]+\))?(?: =+)?$/;
const SECTION = /^_{2,} (.+?) _{2,}$/;
const PLACE = /^([^\s:][^:]*):(\d+):(?: (.*))?$/;
const E_LINE = /^E {1,}(.*)$/;

/** The failure section of test `id` before line `before`: its first and last lines, or null. */
function sectionOf(lines: readonly string[], id: string, before: number): { from: number; to: number } | null {
  const name = id.includes('::') ? id.slice(id.lastIndexOf('::') + 2) : id;
  const klass = id.split('::').slice(1, -1).join('.');
  for (let i = before - 1; i >= 0; i--) {
    const m = SECTION.exec(lines[i]!);
    if (!m) continue;
    const title = m[1]!;
    if (title === name || title === `${klass}.${name}` || title === `ERROR collecting ${id}` || title === `ERROR at setup of ${name}` || title === `ERROR at teardown of ${name}`) {
      let to = i + 1;
      while (to + 1 < before && !SECTION.test(lines[to + 1]!) && !/^=+ /.test(lines[to + 1]!)) to++;
      return { from: i, to };
    }
  }
  return null;
}

export const scanPytest: LanguageScan = (lines) => {
  let summary = -1;
  for (let i = lines.length - 1; i >= 0; i--) {
    if (SUMMARY.test(lines[i]!)) {
      summary = i;
      break;
    }
  }
  if (summary < 0) return null;
  const outcomes: { at: number; id: string; message?: string }[] = [];
  let end = summary;
  for (let j = summary + 1; j < lines.length; j++) {
    const m = OUTCOME.exec(lines[j]!);
    if (m) {
      outcomes.push({ at: j, id: m[2]!, ...(m[3] !== undefined ? { message: m[3] } : {}) });
      end = j;
    } else if (CLOSING.test(lines[j]!)) {
      end = j;
      break;
    } else if (!/^(?:PASSED|SKIPPED|XFAIL|XPASS) /.test(lines[j]!)) break;
    else end = j;
  }
  const first = outcomes[0];
  if (!first) return null;
  const section = sectionOf(lines, first.id, summary);
  const frames: FoundFrame[] = [];
  let errorAt = first.at;
  let error = first.message;
  if (section) {
    let lastE = -1;
    for (let j = section.from + 1; j <= section.to; j++) {
      const place = PLACE.exec(lines[j]!);
      if (place) frames.push({ file: place[1]!, line: Number(place[2]), at: j, user: isPythonUserFile(place[1]!) });
      // The first "E" line of the last group: where the error is said.
      if (E_LINE.test(lines[j]!) && !E_LINE.test(lines[j - 1]!)) lastE = j;
    }
    if (lastE >= 0) {
      errorAt = lastE;
      // The summary cuts a long message ("invalid literal f..."); the section has it whole.
      error = E_LINE.exec(lines[lastE]!)![1]!.trim();
    }
  }
  // A frame's source is its block's "> " line, above its place.
  for (const frame of frames) {
    for (let k = frame.at - 1; k > (section?.from ?? summary); k--) {
      const line = lines[k]!;
      if (PLACE.test(line) || line.startsWith('_ _ _')) break;
      if (line.startsWith('>')) {
        frame.sourceAt = k;
        break;
      }
    }
  }
  return {
    report: { language: 'pytest', how: 'failed', error: error ?? `${first.id} failed`, errorAt, frames, test: first.id, moreFailed: outcomes.length - 1 },
    start: section?.from ?? summary,
    end,
  };
};
