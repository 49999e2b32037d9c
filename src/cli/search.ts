// `warden search [ID] PATTERN`: a run's kept output (or the newest runs')
// searched through the host, printed as `rg -n -C` prints (search-text.ts),
// or the answer as JSON. Exit status as grep's: 0 a line matched, 1 none
// did, 125 Warden's own errors.

import type { HttpWardenApi } from '../shared/http-api';
import { parseDuration } from '../shared/duration';
import type { Verdict } from '../shared/result';
import { DEFAULT_CONTEXT, DEFAULT_MAX_MATCHES, DEFAULT_RUNS, MAX_CONTEXT, MAX_MATCHES, MAX_RUNS, type SearchQuery } from '../shared/search';
import type { CliIo } from './io';
import { tokensOf, UsageError, type OptionSpec } from './parse';
import { forTerminal } from './history';
import { wardenCommand } from './render';
import { searchText } from './search-text';
import { clientError } from './host-verbs';

export const SEARCH_HELP = `Usage: warden search [ID] PATTERN [options]
       warden search --cursor CURSOR [--max-matches N]

Searches a run's kept output (ID), or the newest runs' (no ID; live ones
too), for lines matching PATTERN: a JavaScript regular expression (u flag),
or with -F the text itself. Prints as rg -n -C does: matching lines as
LINE:OFFSET:TEXT (warden show ID --stream S --offset OFFSET starts there),
lines around them as LINE-TEXT, groups apart by --. Colours and a CR before a
line break are not in the way; lines are those of the kept text, and where
the cap dropped output in a stream's middle it says so (nothing there could
be found). One call looks through at most 50,000,000 characters and 2 s; it
then prints the exact command that goes on (--cursor), as it does at
--max-matches.

Options:
  -F, --literal          PATTERN is text, not a regular expression
  -i, --ignore-case      upper and lower case alike
  -e, --regexp PATTERN   the pattern (for one that starts with -)
  --stream S             stdout, stderr or both (default)
  -C, --context N        lines before and after each match (default ${DEFAULT_CONTEXT}, at most ${MAX_CONTEXT})
  -m, --max-matches N    matching lines per call (default ${DEFAULT_MAX_MATCHES}, at most ${MAX_MATCHES})
  --since D              without ID: runs started within D (1h, 30m)
  --verdict V            without ID: runs that ended so (failed, timed-out, ...)
  --runs N               without ID: the newest N runs (default ${DEFAULT_RUNS}, at most ${MAX_RUNS})
  --cursor C             go on where an answer stopped (it holds the search)
  --json                 the answer as JSON: matches (run, stream, line, offset,
                         text, before, after), gaps, runs, more, cursor

Exit status: 0 when a line matched, 1 when none did, 125 for Warden's own errors.`;

const SPEC: Record<string, OptionSpec> = {
  literal: { type: 'boolean', short: 'F' },
  'ignore-case': { type: 'boolean', short: 'i' },
  regexp: { type: 'string', short: 'e' },
  stream: { type: 'string' },
  context: { type: 'string', short: 'C' },
  'max-matches': { type: 'string', short: 'm' },
  since: { type: 'string' },
  verdict: { type: 'string' },
  runs: { type: 'string' },
  cursor: { type: 'string' },
  json: { type: 'boolean' },
};

function whole(flag: string, text: string, min: number, max: number): number {
  const n = Number(text);
  if (!/^\d+$/.test(text) || n < min || n > max) throw new UsageError(`${flag} takes a whole number from ${min} to ${max}, not ${JSON.stringify(text)}.`);
  return n;
}

/** The query `warden search` words ask for, and whether to print JSON. */
export function parseSearchArgs(args: string[]): { query: SearchQuery; json: boolean } {
  const words: string[] = [];
  const query: SearchQuery = {};
  let json = false;
  let pattern: string | undefined;
  for (const token of tokensOf(args, SPEC, 'search')) {
    if (token.kind === 'positional') words.push(token.value);
    if (token.kind !== 'option') continue;
    const value = token.value ?? '';
    switch (token.name) {
      case 'literal':
        query.literal = true;
        break;
      case 'ignore-case':
        query.ignoreCase = true;
        break;
      case 'regexp':
        if (pattern !== undefined) throw new UsageError('-e was given twice: one pattern per search.');
        pattern = value;
        break;
      case 'stream':
        if (value !== 'stdout' && value !== 'stderr' && value !== 'both') throw new UsageError(`--stream takes stdout, stderr or both, not ${JSON.stringify(value)}.`);
        query.stream = value;
        break;
      case 'context':
        query.context = whole(token.rawName, value, 0, MAX_CONTEXT);
        break;
      case 'max-matches':
        query.maxMatches = whole(token.rawName, value, 1, MAX_MATCHES);
        break;
      case 'runs':
        query.maxRuns = whole(token.rawName, value, 1, MAX_RUNS);
        break;
      case 'since': {
        const ms = parseDuration(value);
        if (ms === undefined) throw new UsageError(`--since takes a duration such as 30m or 1h, not ${JSON.stringify(value)}.`);
        query.since = Date.now() - ms;
        break;
      }
      case 'verdict':
        query.verdict = value as Verdict;
        break;
      case 'cursor':
        query.cursor = value;
        break;
      case 'json':
        json = true;
    }
  }
  if (query.cursor !== undefined) {
    if (words.length > 0 || pattern !== undefined) throw new UsageError('--cursor carries the search it continues: give it without ID or PATTERN.');
    return { query, json };
  }
  if (pattern !== undefined) words.push(pattern);
  if (words.length === 0) throw new UsageError('warden search needs a PATTERN: warden search [ID] PATTERN (see warden search --help).');
  if (words.length > 2) throw new UsageError(`warden search takes [ID] PATTERN, not ${words.length} words: quote a pattern with spaces.`);
  if (words.length === 2) {
    const id = words[0]!;
    if (!/^[0-9a-f]{6,32}$/.test(id)) throw new UsageError(`${JSON.stringify(id)} is not a run id (6 to 32 hex characters; see warden list): warden search [ID] PATTERN.`);
    query.id = id;
  }
  query.pattern = words[words.length - 1]!;
  if (query.id !== undefined && (query.since !== undefined || query.verdict !== undefined || query.maxRuns !== undefined)) {
    throw new UsageError('--since, --verdict and --runs choose runs for a search without ID: give them or an ID, not both.');
  }
  return { query, json };
}

export async function searchCommand(args: string[], io: CliIo, host: () => Promise<HttpWardenApi>): Promise<number> {
  const { query, json } = parseSearchArgs(args);
  const api = await host();
  let answer;
  try {
    answer = await api.search(query);
  } catch (error) {
    clientError(error);
  }
  if (json) io.out(`${JSON.stringify(answer, null, 2)}\n`);
  else {
    const maxMatches = query.maxMatches !== undefined ? ` --max-matches ${query.maxMatches}` : '';
    io.out(`${searchText(answer, { escape: (text) => forTerminal(text), next: (cursor) => `${wardenCommand()} search --cursor ${cursor}${maxMatches}` })}\n`);
  }
  return answer.matches.length > 0 ? 0 : 1;
}
