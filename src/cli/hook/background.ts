// Whether an agent's command line sends work to the background with `&`,
// read from the bash grammar's tree: the whole line (`npm run dev &`, `cd
// app && npm run dev > log 2>&1 &`), which the hook starts as a service run
// of the agent (ready when it listens, leased, ended with the agent) rather
// than let it escape or be torn down with the line; or a job inside a longer
// line (`npm run dev & sleep 3; curl ...`), which runs with the line.

import type { BashNode } from './bash-grammar';

export type Background =
  | { kind: 'none' }
  /** The whole line is one background job: `command` is the line without its final `&`. */
  | { kind: 'whole'; command: string }
  /** A job inside the line goes to the background; the line goes on after it. */
  | { kind: 'inner' };

/** How `text` (whose tree is root, a `program`) uses `&`. */
export function backgroundOf(root: BashNode, text: string): Background {
  const statements = root.children.filter((c) => c.type !== 'comment');
  const last = statements.at(-1);
  const ampersands = root.descendantsOfType('&');
  if (last?.type === '&' && ampersands.length === 1) {
    const command = text.slice(0, last.startIndex).trimEnd();
    if (command !== '') return { kind: 'whole', command };
  }
  return ampersands.length > 0 ? { kind: 'inner' } : { kind: 'none' };
}
