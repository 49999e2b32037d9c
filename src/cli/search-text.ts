// A search's answer as text, the way `rg -n -C` prints: per run and stream a
// heading, then matching lines as LINE:OFFSET:TEXT and context lines as
// LINE-TEXT, groups apart by `--`; then where output was not kept (so "no
// match" is honest about it), and the exact call that continues the search.
// `warden search` prints it; `warden mcp`'s search tool answers it (with the
// answer itself as structuredContent).

import type { SearchAnswer, SearchMatch, SearchedRun } from '../shared/search';
import { count } from '../shared/format';

export interface SearchTextOptions {
  /** The exact call that continues the search from `cursor`. */
  next(cursor: string): string;
  /** How a line of output is written (control characters made visible). */
  escape(text: string): string;
}

function runWords(run: SearchedRun | undefined, id: string): string {
  if (!run) return `run ${id}`;
  const how = run.state !== 'ended' ? `${run.state}` : `${run.verdict ?? 'ended'}${run.signal !== null ? `, ${run.signal}` : run.exitCode !== null ? `, exit ${run.exitCode}` : ''}`;
  return `run ${id} (${run.command}; ${how})`;
}

/** The lines of one run's stream: matching lines and their context, each line once, groups apart by `--`. */
function streamLines(matches: SearchMatch[], escape: (text: string) => string): string[] {
  const byLine = new Map<number, string>();
  for (const m of matches) {
    m.before.forEach((text, i) => {
      const line = m.line - m.before.length + i;
      if (!byLine.has(line)) byLine.set(line, `${line}-${escape(text)}`);
    });
    byLine.set(m.line, `${m.line}:${m.offset}:${escape(m.text)}`);
    m.after.forEach((text, i) => {
      const line = m.line + 1 + i;
      const had = byLine.get(line);
      // A later match's own line wins over this one's context.
      if (had === undefined) byLine.set(line, `${line}-${escape(text)}`);
    });
  }
  const out: string[] = [];
  let last: number | null = null;
  for (const line of [...byLine.keys()].sort((a, b) => a - b)) {
    if (last !== null && line > last + 1) out.push('--');
    out.push(byLine.get(line)!);
    last = line;
  }
  return out;
}

export function searchText(answer: SearchAnswer, options: SearchTextOptions): string {
  const { escape } = options;
  const runs = new Map(answer.runs.map((r) => [r.id, r] as const));
  const out: string[] = [];
  const groups = new Map<string, SearchMatch[]>();
  for (const m of answer.matches) {
    const key = `${m.run}\u0000${m.stream}`;
    groups.set(key, [...(groups.get(key) ?? []), m]);
  }
  for (const [key, matches] of groups) {
    const [id, stream] = key.split('\u0000') as [string, string];
    out.push(`${runWords(runs.get(id), id)}, ${stream}:`);
    out.push(...streamLines(matches, escape));
  }
  const lineCount = answer.matches.length;
  const runCount = new Set(answer.matches.map((m) => m.run)).size;
  const looked = `${answer.runs.length} run${answer.runs.length === 1 ? '' : 's'}`;
  if (lineCount === 0) out.push(`No line matches ${answer.literal ? 'the text' : 'the pattern'} ${JSON.stringify(answer.pattern)}${answer.ignoreCase ? ' (any case)' : ''} in ${answer.runs.length === 1 ? runWords(answer.runs[0], answer.runs[0]!.id) : looked} (${count(answer.scannedChars)} characters searched${answer.more ? ' so far' : ''}).`);
  for (const gap of answer.gaps) {
    out.push(`[warden: ${gap.stream} of run ${gap.run} was not kept whole: ${count(gap.droppedChars)} characters were dropped at line ${count(gap.line)} (the cap keeps its head and tail), and nothing in them could be searched; lines after it are numbered in what was kept]`);
  }
  for (const id of answer.missing) out.push(`[warden: run ${id} is no longer in the history; it was not searched]`);
  if (lineCount > 0) out.push(`${lineCount} matching line${lineCount === 1 ? '' : 's'} in ${runCount} of ${looked} (${count(answer.scannedChars)} characters searched). Lines are LINE:OFFSET:TEXT (show takes the OFFSET) and LINE-TEXT around them.`);
  if (answer.cursor !== null) {
    const why =
      answer.stoppedBy === 'matches'
        ? 'it stopped at maxMatches; more lines may match'
        : answer.stoppedBy === 'text'
          ? 'it stopped at the 50,000,000 characters one call looks through'
          : answer.stoppedBy === 'time'
            ? "it stopped at the 2 s one call may take"
            : 'the run is still going; this continues in what it prints next';
    out.push(`To go on (${why}): ${options.next(answer.cursor)}`);
  }
  return out.join('\n');
}
