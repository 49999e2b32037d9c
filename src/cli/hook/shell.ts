// Just enough of the shell's grammar to judge a command the way a harness's
// permission rules do: the simple commands a line is made of (split at ;, &,
// &&, ||, | and newlines outside quotes), and whether it holds anything a
// prefix rule cannot vouch for (command or process substitution, subshells,
// redirections to files). Quoting for sh when a command line is built.

export interface SplitCommand {
  /** Each simple command, trimmed, in order. */
  parts: string[];
  /** Something in it that a rule about its words cannot judge: $(...), `...`, <(...), (...), {...}, a redirection to a file. */
  opaque: boolean;
}

/** Redirections that change nothing outside the command: to /dev/null or between its own streams. */
const HARMLESS_REDIRECT = /^(\d?>>?|&>)(&\d|\s*\/dev\/null)/;

export function splitCommand(text: string): SplitCommand {
  const parts: string[] = [];
  let opaque = false;
  let current = '';
  let quote: '"' | "'" | null = null;
  const flush = () => {
    const part = current.trim();
    if (part !== '') parts.push(part);
    current = '';
  };
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quote === "'") {
      current += c;
      if (c === "'") quote = null;
      continue;
    }
    if (c === '\\') {
      current += c + (text[i + 1] ?? '');
      i++;
      continue;
    }
    if (quote === '"') {
      current += c;
      if (c === '"') quote = null;
      else if (c === '`' || (c === '$' && text[i + 1] === '(')) opaque = true;
      continue;
    }
    if (c === "'" || c === '"') {
      quote = c;
      current += c;
      continue;
    }
    if (c === '`' || (c === '$' && text[i + 1] === '(') || ((c === '<' || c === '>') && text[i + 1] === '(')) opaque = true;
    if (c === '(' || c === ')' || c === '{' || c === '}') opaque = true;
    if (c === '>' || c === '<') {
      const from = /\d$/.test(current) ? i - 1 : i;
      const ahead = text.slice(from);
      if (c === '<' || !HARMLESS_REDIRECT.test(c === '>' && text[i - 1] === '&' ? `&${ahead}` : ahead)) opaque = true;
    }
    if (c === ';' || c === '\n' || c === '|' || (c === '&' && text[i + 1] !== '>' && text[i - 1] !== '>')) {
      flush();
      if ((c === '|' || c === '&') && text[i + 1] === c) i++;
      continue;
    }
    current += c;
  }
  if (quote !== null) opaque = true;
  flush();
  return { parts, opaque };
}

/** The words of one simple command, quotes removed (no expansion). */
export function wordsOf(part: string): string[] {
  const words: string[] = [];
  let word = '';
  let inWord = false;
  let quote: '"' | "'" | null = null;
  for (let i = 0; i < part.length; i++) {
    const c = part[i]!;
    if (quote === "'") {
      if (c === "'") quote = null;
      else word += c;
      continue;
    }
    if (quote === '"') {
      if (c === '"') quote = null;
      else if (c === '\\' && i + 1 < part.length && '"\\$`'.includes(part[i + 1] ?? 'x')) word += part[++i];
      else word += c;
      continue;
    }
    if (c === "'" || c === '"') {
      quote = c;
      inWord = true;
      continue;
    }
    if (c === '\\' && i + 1 < part.length) {
      word += part[++i];
      inWord = true;
      continue;
    }
    if (/\s/.test(c)) {
      if (inWord) words.push(word);
      word = '';
      inWord = false;
      continue;
    }
    word += c;
    inWord = true;
  }
  if (inWord) words.push(word);
  return words;
}

/** One word for sh: single-quoted unless it is plainly safe. */
export function shQuote(word: string): string {
  if (/^[A-Za-z0-9_@%+=:,./-]+$/.test(word)) return word;
  return `'${word.replace(/'/g, `'\\''`)}'`;
}
