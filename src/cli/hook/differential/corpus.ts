// The command lines the hook's differential test runs through bash: the
// reproductions of the audit that found the hook allowing what no rule
// allowed (issue 27), forms of every quoting, comment, substitution and
// compound construct, and lines generated from those pieces by a seeded
// generator, so a run is repeatable and a failure names its line. Every
// path is relative: a line the hook wrongly allows runs in a scratch
// directory, its programs replaced by shims (trace.ts).

import type { Rules } from './oracle';

/** The rule sets each line is judged under. */
export const RULE_SETS: { name: string; rules: Rules }[] = [
  { name: 'only echo, printf, ls, cat, true, wc, grep and git status', rules: { allow: ['Bash(echo:*)', 'Bash(printf:*)', 'Bash(ls:*)', 'Bash(cat:*)', 'Bash(true)', 'Bash(wc:*)', 'Bash(grep:*)', 'Bash(git status:*)'], ask: [], deny: [] } },
  { name: 'bare Bash with rm, git push and curl denied', rules: { allow: ['Bash'], ask: [], deny: ['Bash(rm:*)', 'Bash(git push:*)', 'Bash(curl:*)'] } },
  { name: 'echo and git allowed, git push denied, git commit asks', rules: { allow: ['Bash(echo:*)', 'Bash(git:*)'], ask: ['Bash(git commit:*)'], deny: ['Bash(git push:*)'] } },
  { name: 'glob rules: ls * and echo * allowed, rm -rf * denied', rules: { allow: ['Bash(ls *)', 'Bash(echo *)'], ask: [], deny: ['Bash(rm -rf *)'] } },
];

/** The audit's reproductions and their neighbours, by name. */
export const NAMED: Record<string, string> = {
  'a comment holding a quote hides the next line': "echo hi # it's\nrm -rf DIR/a\n# '",
  'an ANSI-C string holding a quote hides what follows': "echo $'\\''; rm -rf DIR/b; echo \\'",
  'an ANSI-C escape spells the command name': "$'\\x72m' -rf x",
  'variables spell the command name': 'X=r; Y=m; $X$Y -rf x',
  'a glob spells the command name': '/bin/r? -rf x',
  'eval joins quoted pieces into a command': 'eval "r""m -rf x"',
  'an option before the subcommand': 'git -C . push',
  'a backslash-newline joins a command name': 'r\\\nm -rf x',
  'a double-quoted comment marker': 'echo "#"; rm -rf y',
  'a comment after a word with #': 'echo a#b # c\nrm z',
  'a here-document runs a substitution': 'cat <<EOF\n$(rm -rf h)\nEOF',
  'a quoted here-document runs nothing': "cat <<'EOF'\n$(rm -rf h)\nEOF",
  'a here-string runs a substitution': 'cat <<< "$(rm -rf s)"',
  'arithmetic runs an array subscript': "x='a[$(rm -rf q)]'; echo $((x))",
  'a test runs an array subscript': "x='a[$(rm -rf q)]'; [[ $x -eq 1 ]]; echo",
  'a for variable in arithmetic': "for x in 'a[$(rm -rf f)]'; do echo $((x)); done",
  'a process substitution': 'cat <(rm -rf p)',
  'a backquote substitution': 'echo `rm -rf b`',
  'a substitution in a redirection target': 'echo hi > "$(rm -rf t)"',
  'a function named like an allowed command': 'echo() { rm -rf e; }; echo hi',
  'an alias defined then used on the next line': 'shopt -s expand_aliases; alias ls=rm\nls -rf a',
  'PATH changed before a plain name': 'PATH=.:$PATH; ls',
  'sh -c with a string': "sh -c 'rm -rf c'",
  'bash -c with a string': 'bash -c "rm -rf c"',
  'xargs runs what it reads': 'echo x | xargs rm',
  'env runs a command': 'env rm -rf v',
  'sudo runs a command': 'sudo rm -rf s',
  'command runs a command': 'command rm -rf c',
  'exec replaces the shell': 'exec rm -rf e',
  'a trap runs later': "trap 'rm -rf t' EXIT; echo",
  'source runs a file': 'echo "rm -rf f" > f.sh; source f.sh',
  'a brace expansion spells a command': '{rm,-rf,x}',
  'a quoted command name': '"rm" -rf x',
  'a split quoted command name': "r''m -rf x",
  'an escaped command name': '\\rm -rf x',
  'a timeout wrapper': 'timeout 5 rm -rf w',
  'nice and nohup wrappers': 'nice -n 5 nohup rm -rf n',
  'a subshell': '(rm -rf sub)',
  'a group': '{ rm -rf grp; }',
  'a pipeline into rm': 'echo x | rm -rf y',
  'an and-list': 'true && rm -rf and',
  'a background job': 'rm -rf bg & echo',
  'a case arm': 'case x in x) rm -rf arm;; esac',
  'an if branch': 'if true; then rm -rf then; fi',
  'a while body': 'while false; do rm -rf body; done; echo',
  'a negation': '! rm -rf neg',
  'git push with a flag after': 'git push --force',
  'git push through a variable': 'X=push; git $X',
  'git commit': 'git commit -m x',
  'test -v evaluates a subscript': "test -v 'a[$(rm -rf tv)]'; echo",
  '[ -v ] evaluates a subscript': "[ -v 'a[$(rm -rf bv)]' ]; echo",
  'unset evaluates a subscript of an array': "declare -a a; unset 'a[$(rm -rf us)]'",
  'printf -v evaluates a subscript': "printf -v 'a[$(rm -rf pv)]' x",
  'read evaluates a subscript': "read 'a[$(rm -rf rd)]' <<< x",
  'declare evaluates a subscript': "declare 'a[$(rm -rf dc)]=1'",
  'an indirect expansion of a name set here': "x='a[$(rm -rf ie)]'; echo ${!x}",
  'a test comparing a substitution': "[[ $(echo 'a[$(rm -rf tc)]') -eq 1 ]]; echo",
  'unset of a substitution': "unset $(echo 'a[$(rm -rf uo)]')",
  'a prompt expansion': "x='$(rm -rf pe)'; echo ${x@P}",
  'declare -n names another variable': 'declare -n r=PATH; r=.; ls',
  'printf -v sets PATH': 'printf -v PATH %s .; ls',
  'read sets PATH': 'read PATH <<< .; ls',
  'a carriage return in a word': 'echo hi\rrm -rf cr',
  'plain allowed pipeline': 'echo hi | wc -l',
  'plain allowed list': 'ls -la && echo done; git status --short',
  'quotes that hold operators': "echo 'a && b' \"c; d\" e\\|f",
  'redirections to null and between streams': 'ls >/dev/null 2>&1; echo x 1>&2',
  'a comment only': '# nothing here',
  'an empty line between commands': 'echo a\n\necho b',
  'printf with a format': "printf '%s\\n' a b",
};

const PLAIN_NAMES = ['echo', 'printf', 'ls', 'cat', 'true', 'wc', 'grep', 'git status', 'git log', 'echo -n'];
const PLAIN_ARGS = ['x', '-l', '"a b"', "'c d'", 'a#b', '--', "'a;b'", '"a|b"', 'a\\ b', '"$HOME"', '$((1+2))', "'*'", '\\*', '"x"y', '-C'];
const NAMES = ['echo', 'printf', 'ls', 'cat', 'rm', 'git', 'curl', 'true', 'wc', 'grep', 'eval', 'sudo', 'env', 'xargs', 'sh -c', 'timeout 5', 'nice -n 5', 'nohup', 'command', 'builtin', 'exec', 'source', 'time', '/bin/rm', './rm', '\\rm', 'r\\m', '"rm"', "'rm'", "r''m", "$'rm'", "$'\\x72m'", '$X', '${X}', '$(echo rm)', '`echo rm`', 'r?', 'r*', '{rm,x}', '~/rm', 'X=1 echo', 'PATH=. ls', 'IFS=x echo', 'git -C .', 'git status', 'git push', 'git commit'];
const ARGS = ['x', '-rf', '"a b"', "'c'", "$'\\''", "\\'", "'#'", '\\#', 'a#b', '$(rm y)', '`rm z`', '<(rm w)', 'push', 'status', '"$(echo push)"', '$((1+2))', '*', '?', "'it'\"'\"'s'", '"$X"', '${X:-$(rm d)}', '"a\\"b"', "'a;b'", '"a|b"', 'a\\ b', '--', '-C .', '$X'];
const SEPARATORS = [';', ' && ', ' || ', ' | ', ' & ', '\n', ' |& ', ';\n'];
const REDIRECTS = ['', '', '', ' > out', ' >/dev/null', ' 2>&1', ' <<< x', ' 2>/dev/null', ' >> log', ' < in'];
const COMMENTS = ['', '', '', " # it's", ' # "', ' #', ' # $(rm c)', " # '\n"];
const WRAPS: ((s: string) => string)[] = [
  (s) => s,
  (s) => s,
  (s) => `(${s})`,
  (s) => `{ ${s}; }`,
  (s) => `echo $(${s})`,
  (s) => `if true; then ${s}; fi`,
  (s) => `for i in a; do ${s}; done`,
  (s) => `while false; do ${s}; done`,
  (s) => `case x in x) ${s};; esac`,
  (s) => `f() { ${s}; }; f`,
  (s) => `! ${s}`,
  (s) => `X=r; Y=m; ${s}`,
  (s) => `cat <<EOF\n$(${s})\nEOF`,
  (s) => `cat <<'EOF'\n$(${s})\nEOF`,
  (s) => `${s} \\\n  --flag`,
];

/** A small fast PRNG (mulberry32): the same seed gives the same corpus on every machine. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** count generated lines from seed: one to three simple commands of the pieces above, joined and wrapped. */
export function generate(count: number, seed = 27): string[] {
  const next = random(seed);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(next() * list.length)]!;
  // Most commands plain, so each rule set allows enough lines for the oracle to judge; the rest from every tricky piece.
  const simple = () => {
    const plain = next() < 0.7;
    const words = [pick(plain ? PLAIN_NAMES : NAMES)];
    const n = Math.floor(next() * 3);
    for (let i = 0; i < n; i++) words.push(pick(plain && next() < 0.8 ? PLAIN_ARGS : ARGS));
    return `${words.join(' ')}${pick(REDIRECTS)}${pick(COMMENTS)}`;
  };
  const lines: string[] = [];
  for (let i = 0; i < count; i++) {
    let line = simple();
    const more = Math.floor(next() * 3);
    for (let j = 0; j < more; j++) line += `${pick(SEPARATORS)}${simple()}`;
    lines.push(pick(WRAPS)(line));
  }
  return lines;
}
