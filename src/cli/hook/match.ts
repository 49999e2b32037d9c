// How one simple command (its words, null where bash expands them) meets a
// Claude Code Bash rule. Allow rules are matched strictly: every word the
// rule names must be literal and equal, as Claude Code compares text, with the
// wrappers and environment assignments its documentation says it strips
// (timeout, time, nice, nohup; NODE_ENV=... and the like). Deny and ask rules
// are matched generously: a word bash expands could be any word, a path is
// taken by its last part, the rule's words may sit among options (git -C .
// push), and a command that runs another the words do not show (eval, sh -c,
// xargs, sudo ...) could be anything.

export type Words = readonly (string | null)[];

/** A Bash rule's specifier, read once. */
export type Spec =
  | { kind: 'any' }
  | { kind: 'prefix'; words: string[] }
  | { kind: 'exact'; words: string[] }
  | { kind: 'glob'; pattern: string; words: string[] };

/** The words of a rule's text: split at blanks, quotes removed (a user's rule, not an agent's command). */
export function ruleWords(text: string): string[] {
  const words: string[] = [];
  let word = '';
  let inWord = false;
  let quote: string | null = null;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quote !== null) {
      if (c === quote) quote = null;
      else if (c === '\\' && quote === '"' && i + 1 < text.length) word += text[++i];
      else word += c;
      continue;
    }
    if (c === '"' || c === "'") {
      quote = c;
      inWord = true;
    } else if (c === '\\' && i + 1 < text.length) {
      word += text[++i];
      inWord = true;
    } else if (/\s/.test(c)) {
      if (inWord) words.push(word);
      word = '';
      inWord = false;
    } else {
      word += c;
      inWord = true;
    }
  }
  if (inWord) words.push(word);
  return words;
}

/** The specifier of a Bash rule (Bash, Bash(*), Bash(x:*), Bash(x), Bash(x * y)); null when the rule is about another tool. */
export function parseRule(rule: string): Spec | null {
  const trimmed = rule.trim();
  if (trimmed === 'Bash') return { kind: 'any' };
  const match = /^Bash\(([\s\S]*)\)$/.exec(trimmed);
  if (!match) return null;
  const spec = (match[1] ?? '').trim();
  if (spec === '*' || spec === '') return { kind: 'any' };
  if (spec.endsWith(':*')) return { kind: 'prefix', words: ruleWords(spec.slice(0, -2)) };
  if (!spec.includes('*')) return { kind: 'exact', words: ruleWords(spec) };
  // The words before the first one with a wildcard in it: what a glob rule names for certain.
  const all = ruleWords(spec);
  const firstWild = all.findIndex((w) => w.includes('*'));
  return { kind: 'glob', pattern: spec, words: all.slice(0, firstWild < 0 ? all.length : firstWild) };
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** Whether literal words match a glob specifier as Claude Code reads it ("*" any text; a lone trailing " *" also the bare command). */
export function globMatches(pattern: string, text: string): boolean {
  const stars = pattern.split('*').length - 1;
  if (stars === 1 && pattern.endsWith(' *') && text === pattern.slice(0, -2)) return true;
  return new RegExp(`^${pattern.split('*').map(escapeRegExp).join('[\\s\\S]*')}$`).test(text);
}

function startsWith(words: Words, prefix: readonly string[]): boolean {
  return prefix.every((w, i) => words[i] === w);
}

/** Whether the words, as they stand, certainly match spec. */
export function certainMatch(spec: Spec, words: Words): boolean {
  switch (spec.kind) {
    case 'any':
      return true;
    case 'prefix':
      return startsWith(words, spec.words);
    case 'exact':
      return words.length === spec.words.length && startsWith(words, spec.words);
    case 'glob':
      return words.every((w) => w !== null) && globMatches(spec.pattern, words.join(' '));
  }
}

function lastPart(word: string): string {
  return word.split('/').pop() ?? word;
}

/** Whether the words could match spec once bash expands them (a null word may be any words), a path taken by its last part and other words allowed between the rule's. */
export function possibleMatch(spec: Spec, words: Words): boolean {
  if (spec.kind === 'any') return true;
  if (words.length === 0) return false;
  const want = spec.words;
  if (want.length === 0) return words.some((w) => w === null) || certainMatch(spec, words);
  const name = words[0] ?? null;
  // A name bash expands may expand to the rule's words and more.
  if (name === null) return true;
  if (lastPart(name) !== lastPart(want[0]!)) return false;
  let at = 1;
  for (const word of want.slice(1)) {
    while (at < words.length && words[at] !== null && words[at] !== word) at++;
    if (at >= words.length) return false;
    // A null word may stand for several words: it can match the rest of the rule too.
    if (words[at] !== null) at++;
  }
  return true;
}

/** The command a wrapper Claude Code looks through runs (timeout 5 cmd -> cmd), or null when words are not such a wrapper with options Warden can read. */
export function unwrap(words: Words): Words | null {
  const name = words[0] ?? null;
  if (name === null) return null;
  let at = 1;
  const word = () => words[at] ?? null;
  switch (lastPart(name)) {
    case 'time':
      while (word() === '-p') at++;
      break;
    case 'nohup':
      break;
    case 'nice':
      if (word() === '-n') {
        if (!/^-?\d+$/.test(words[2] ?? '')) return null;
        at = 3;
      } else if (/^(-\d+|-n-?\d+|--adjustment=-?\d+)$/.test(word() ?? '')) at++;
      break;
    case 'timeout': {
      for (;;) {
        const w = word();
        if (w === '--preserve-status' || w === '--foreground' || w === '-v' || w === '--verbose') at++;
        else if (w === '-s' || w === '-k' || w === '--signal' || w === '--kill-after') {
          if ((words[at + 1] ?? null) === null) return null;
          at += 2;
        } else if (w !== null && /^(--signal=|--kill-after=|-s.|-k.)/.test(w)) at++;
        else break;
      }
      const duration = word();
      if (duration === null || !/^\d+(\.\d+)?[smhd]?$/.test(duration)) return null;
      at++;
      break;
    }
    case 'stdbuf':
      for (let w = word(); w !== null && /^(-[ioe].+|--(input|output|error)=.+)$/.test(w); w = word()) at++;
      if (at === 1) return null;
      break;
    default:
      return null;
  }
  return at < words.length ? words.slice(at) : null;
}

/** Variable assignments before a command that Claude Code strips before matching: they change no program's choice of what to run. */
export function isSafeAssignment(name: string): boolean {
  return /^(NODE_ENV|RUST_BACKTRACE|RUST_LOG|GOOS|GOARCH|CGO_ENABLED|CI|DEBUG|FORCE_COLOR|NO_COLOR|TERM|TZ|LANG|LANGUAGE|LC_[A-Z]+|PYTHONUNBUFFERED|PYTHONDONTWRITEBYTECODE|PORT|HOST|VERBOSE|COLUMNS|LINES)$/.test(name);
}

/** Commands that run other commands their words do not show; a name, and why. */
const INDIRECT: Record<string, string> = {
  eval: 'eval runs text as commands',
  source: 'source runs the commands of a file',
  '.': '. runs the commands of a file',
  exec: 'exec replaces the shell or rearranges its descriptors',
  command: 'command runs a command by a name Warden does not resolve',
  builtin: 'builtin runs a builtin by name',
  env: 'env runs a command with a changed environment',
  xargs: 'xargs runs a command with words from its input',
  sudo: 'sudo runs a command as another user',
  doas: 'doas runs a command as another user',
  su: 'su runs a command as another user',
  runuser: 'runuser runs a command as another user',
  pkexec: 'pkexec runs a command as another user',
  trap: 'trap sets commands to run later',
  alias: 'alias renames commands',
  enable: 'enable loads or turns off builtins',
  hash: 'hash can point a name at another program',
  coproc: 'coproc runs a command in the background',
  fc: 'fc runs commands from the history',
  bind: 'bind can run commands on keys',
  complete: 'complete can run commands',
  compgen: 'compgen can run commands',
  setsid: 'setsid runs a command',
  chroot: 'chroot runs a command',
  ionice: 'ionice runs a command',
  chrt: 'chrt runs a command',
  taskset: 'taskset runs a command',
  flock: 'flock runs a command',
  watch: 'watch runs a command',
  strace: 'strace runs a command',
  ltrace: 'ltrace runs a command',
  unshare: 'unshare runs a command',
  nsenter: 'nsenter runs a command',
  'systemd-run': 'systemd-run runs a command',
  script: 'script runs a command',
  parallel: 'parallel runs commands',
};

const SHELLS = new Set(['sh', 'bash', 'dash', 'zsh', 'ksh', 'mksh', 'fish', 'busybox', 'csh', 'tcsh', 'ash', 'yash', 'rbash']);

/** Why a simple command may run something its words do not show, or null when it runs what it names. */
export function indirection(words: Words): string | null {
  const name = words[0];
  if (name === undefined) return null;
  if (name === null) return 'its command name is not plain text (an expansion, a glob or a quoting form)';
  const base = lastPart(name);
  if (SHELLS.has(base)) return `${base} runs commands Warden does not see`;
  if (base === 'command' && (words[1] === '-v' || words[1] === '-V')) return null;
  if (base === 'env' && words.length === 1) return null;
  if ((base === 'mapfile' || base === 'readarray') && words.some((w) => w === null || w.startsWith('-C'))) return `${base} -C runs a command for each line`;
  if (base === 'find' && words.some((w) => w === null || /^-(exec|execdir|ok|okdir)$/.test(w))) return 'find runs a command for what it finds';
  if (base in INDIRECT) return INDIRECT[base]!;
  const inner = unwrap(words);
  if (inner) return indirection(inner);
  if (['time', 'nohup', 'nice', 'timeout', 'stdbuf'].includes(base) && words.length > 1) return `${base} runs a command Warden cannot read`;
  return null;
}

/** The forms of a command an allow rule may match: as written (safe assignments stripped), and through each wrapper. */
export function allowForms(words: Words, assignments: readonly { name: string }[]): Words[] {
  if (!assignments.every((a) => isSafeAssignment(a.name))) return [];
  const forms: Words[] = [words];
  for (let inner = unwrap(words); inner; inner = unwrap(inner)) forms.push(inner);
  return forms;
}

/** The forms of a command a deny or ask rule may match: as written, through each wrapper, and each later word of a command that runs another. */
export function denyForms(words: Words): Words[] {
  const forms: Words[] = [words];
  for (let inner = unwrap(words); inner; inner = unwrap(inner)) forms.push(inner);
  const name = words[0] ?? null;
  if (name !== null && (indirection(words) !== null || unwrap(words) !== null)) {
    for (let i = 1; i < words.length; i++) forms.push(words.slice(i));
  }
  // And each by its name's last part (/bin/rm as rm).
  for (const form of [...forms]) {
    const first = form[0] ?? null;
    if (first !== null && first.includes('/')) forms.push([lastPart(first), ...form.slice(1)]);
  }
  return forms;
}
