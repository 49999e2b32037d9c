// A command line bash has nothing to interpret in: words of letters, digits
// and `_ . / : @ + , = -` between spaces or tabs, none of them a reserved
// word or an assignment in command position. Most lines an agent runs are
// such (`npm test -- --grep parser`, `git status`, `pytest -x tests/unit`),
// and for them the words are the command, exactly as walk.ts would read
// them from the bash grammar's tree. Reading them here spares the hook the
// WebAssembly grammar's compile and first parse (bench (r)): any other
// character (quotes, `$`, `\`, globs, `~`, `#`, `{`, `!`, redirections,
// operators, a newline) sends the line to the grammar.

import type { Analysis } from './walk';

const WORD = /^[A-Za-z0-9_./:@+,=-]+$/;

/** bash's reserved words: in command position they start a compound command, not a program. */
const RESERVED = new Set(['!', '[[', ']]', '{', '}', 'case', 'coproc', 'do', 'done', 'elif', 'else', 'esac', 'fi', 'for', 'function', 'if', 'in', 'select', 'then', 'time', 'until', 'while']);

/** The analysis of a line made of plain words only; null for any other line (read it with the grammar). */
export function plainLine(text: string): Analysis | null {
  const trimmed = text.replace(/^[ \t]+/, '').replace(/[ \t]+$/, '');
  if (trimmed === '') return null;
  const words = trimmed.split(/[ \t]+/);
  if (!words.every((word) => WORD.test(word))) return null;
  const [name] = words as [string, ...string[]];
  if (name.includes('=') || RESERVED.has(name)) return null;
  return { commands: [{ words, assignments: [], text: trimmed }], assignments: [], doubts: [], writesFiles: false };
}
