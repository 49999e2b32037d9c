// The differential test's judge, written apart from the hook's own matching
// (match.ts) and as plainly as Claude Code's documentation reads: a command
// is its words joined by spaces; Bash(p:*) is that text equal to p or
// starting with "p "; Bash(x) is the text x; * in a rule is any text. Deny and
// ask rules also see through the wrappers that run the words after them.

export interface Rules {
  allow: string[];
  ask: string[];
  deny: string[];
}

/** A rule's specifier: '' for every command, null for another tool's rule. */
function specOf(rule: string): string | null {
  if (rule === 'Bash') return '';
  const m = /^Bash\((.*)\)$/s.exec(rule);
  if (!m) return null;
  return m[1] === '*' ? '' : (m[1] ?? '');
}

export function textMatches(spec: string, text: string): boolean {
  if (spec === '') return true;
  if (spec.endsWith(':*')) {
    const prefix = spec.slice(0, -2);
    return text === prefix || text.startsWith(`${prefix} `);
  }
  if (!spec.includes('*')) return text === spec;
  if (spec.split('*').length === 2 && spec.endsWith(' *') && text === spec.slice(0, -2)) return true;
  const pattern = spec
    .split('*')
    .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
    .join('.*');
  return new RegExp(`^${pattern}$`, 's').test(text);
}

const ASSIGNMENT = /^[A-Za-z_][A-Za-z0-9_]*(\[[^\]]*\])?\+?=/;
/** xtrace records of shell syntax, not commands. */
const KEYWORDS = new Set(['for', 'select', 'case', '[[', '((', 'function']);
const RUNNERS = new Set(['sudo', 'env', 'xargs', 'timeout', 'nice', 'nohup', 'time', 'exec', 'command', 'builtin', 'doas', 'setsid', 'watch', 'stdbuf', 'eval']);

/** The words a traced record runs, assignments before them dropped; null for a record that runs nothing. */
export function commandOf(record: string[]): string[] | null {
  let words = record;
  while (words.length > 0 && ASSIGNMENT.test(words[0]!)) words = words.slice(1);
  if (words.length === 0 || KEYWORDS.has(words[0]!)) return null;
  return words;
}

/** The record as written, and through timeout DUR / time / nice [-n N] / nohup, as Claude Code looks through them. */
function allowTexts(words: string[]): string[] {
  const texts = [words.join(' ')];
  let w = words;
  for (;;) {
    if (w[0] === 'timeout' && w.length > 2) w = w.slice(2);
    else if ((w[0] === 'time' || w[0] === 'nohup') && w.length > 1) w = w.slice(1);
    else if (w[0] === 'nice' && w[1] === '-n' && w.length > 3) w = w.slice(3);
    else if (w[0] === 'nice' && w.length > 1) w = w.slice(1);
    else break;
    texts.push(w.join(' '));
  }
  return texts;
}

/** Every text a deny rule may see in the record: as written, by the name's last part, and every tail after a wrapper. */
function denyTexts(words: string[]): string[] {
  const texts = new Set<string>();
  const add = (w: string[]) => {
    texts.add(w.join(' '));
    texts.add([w[0]!.split('/').pop()!, ...w.slice(1)].join(' '));
  };
  add(words);
  if (RUNNERS.has(words[0]!.split('/').pop()!)) for (let i = 1; i < words.length; i++) add(words.slice(i));
  return [...texts];
}

/** Why the traced commands of a line the hook allowed break the rules, or null when none does. */
export function ruleBreach(records: string[][], rules: Rules, mode = 'default'): string | null {
  const specs = (list: string[]) => list.map((rule) => ({ rule, spec: specOf(rule) })).filter((r): r is { rule: string; spec: string } => r.spec !== null);
  const deny = specs(rules.deny);
  const ask = specs(rules.ask);
  const allow = specs(rules.allow);
  const everything = mode === 'bypassPermissions' || allow.some((r) => r.spec === '');
  for (const record of records) {
    const words = commandOf(record);
    if (!words) continue;
    const shown = JSON.stringify(words);
    for (const { rule, spec } of deny) if (denyTexts(words).some((t) => textMatches(spec, t))) return `bash ran ${shown}, which the deny rule ${rule} matches`;
    for (const { rule, spec } of ask) if (denyTexts(words).some((t) => textMatches(spec, t))) return `bash ran ${shown}, which the ask rule ${rule} matches`;
    if (!everything && !allowTexts(words).some((t) => allow.some(({ spec }) => textMatches(spec, t)))) return `bash ran ${shown}, which no allow rule matches`;
  }
  return null;
}
