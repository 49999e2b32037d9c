// Quoting for sh when Warden builds a command line (the hook's `warden run`
// line, setup's hook command). Reading a command line is the grammar's job
// (bash-grammar.ts, walk.ts).

/** One word for sh: single-quoted unless it is plainly safe. */
export function shQuote(word: string): string {
  if (/^[A-Za-z0-9_@%+=:,./-]+$/.test(word)) return word;
  return `'${word.replace(/'/g, `'\\''`)}'`;
}
