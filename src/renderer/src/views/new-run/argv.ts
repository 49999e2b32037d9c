// The New run form's command field, split into argv words the way a POSIX
// shell splits them: blanks separate words; '...' keeps everything literally;
// "..." keeps everything but a backslash before $ ` " \ or a newline; an
// unquoted backslash keeps the next character (backslash-newline joins lines).
// Nothing is expanded: no $VAR, globs, ~, pipes or redirections. The first
// unquoted character that would mean something to a shell is reported, so the
// form can suggest the Shell box instead of running "|" as an argument.

export type ArgvParse =
  | { ok: true; argv: string[]; /** The first unquoted shell metacharacter, or null. */ shellSyntax: string | null }
  | { ok: false; error: string };

const BLANKS = ' \t\r\n';
/** Special anywhere in an unquoted word. */
const SPECIAL = '|&;<>()$`*?';
/** Special at the start of a word only. */
const LEADING = '~#';
/** The characters a backslash escapes inside double quotes. */
const DQ_ESCAPES = '$`"\\';

export function splitArgv(text: string): ArgvParse {
  const argv: string[] = [];
  let word = '';
  let inWord = false;
  let shellSyntax: string | null = null;
  const note = (c: string) => {
    if (shellSyntax === null) shellSyntax = c;
  };

  let i = 0;
  while (i < text.length) {
    const c = text[i]!;
    if (BLANKS.includes(c)) {
      if (inWord) argv.push(word);
      word = '';
      inWord = false;
      i += 1;
    } else if (c === "'") {
      const end = text.indexOf("'", i + 1);
      if (end < 0) return { ok: false, error: `The ' at character ${i + 1} is never closed.` };
      word += text.slice(i + 1, end);
      inWord = true;
      i = end + 1;
    } else if (c === '"') {
      let j = i + 1;
      let closed = false;
      while (j < text.length) {
        const d = text[j]!;
        if (d === '"') {
          closed = true;
          break;
        }
        const next = text[j + 1];
        if (d === '\\' && next !== undefined && (next === '\n' || DQ_ESCAPES.includes(next))) {
          if (next !== '\n') word += next;
          j += 2;
          continue;
        }
        if (d === '$' || d === '`') note(d);
        word += d;
        j += 1;
      }
      if (!closed) return { ok: false, error: `The " at character ${i + 1} is never closed.` };
      inWord = true;
      i = j + 1;
    } else if (c === '\\') {
      const next = text[i + 1];
      if (next === undefined) return { ok: false, error: 'The command ends with a lone backslash: write \\\\ for a backslash.' };
      if (next !== '\n') {
        word += next;
        inWord = true;
      }
      i += 2;
    } else {
      if (SPECIAL.includes(c) || (!inWord && LEADING.includes(c))) note(c);
      word += c;
      inWord = true;
      i += 1;
    }
  }
  if (inWord) argv.push(word);
  return { ok: true, argv, shellSyntax };
}
