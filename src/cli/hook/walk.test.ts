// Table tests of what the walk reads from bash's grammar (walk.ts): every
// simple command, its literal words (null where bash expands), the doubts,
// and whether a redirection writes a file. One row per construct; a row's
// doubt is matched by a word of its message.

import { beforeAll, describe, expect, it } from 'vitest';
import { loadBashGrammar, MAX_COMMAND_CHARS, type BashGrammar } from './bash-grammar';
import { analyzeCommand, doubleQuotedLiteral, isDangerousVariable, unquotedLiteral, type Analysis } from './walk';

let grammar: BashGrammar;
beforeAll(async () => {
  grammar = await loadBashGrammar();
});

function read(line: string): Analysis {
  const analysis = analyzeCommand(grammar, line);
  if (!analysis) throw new Error('not parsed');
  return analysis;
}

const words = (line: string) => read(line).commands.map((c) => c.words);

describe('unquotedLiteral', () => {
  it.each<[string, string | null]>([
    ['ls', 'ls'],
    ['a#b', 'a#b'],
    ['\\rm', 'rm'],
    ['a\\ b', 'a b'],
    ["\\'", "'"],
    ['r\\\nm', 'rm'],
    ['x\\', null],
    ['', null],
    ['~/x', null],
    ['a=~/x', null],
    ['a:~/x', null],
    ['a~b', 'a~b'],
    ['[', '['],
    [']', ']'],
    ['a]', 'a]'],
    ['[ab]', null],
    ['r?', null],
    ['r*', null],
    ['\\*', '*'],
    ['{}', '{}'],
    ['{a,b}', null],
    ['a}', null],
    ['\\{a', '{a'],
    ['$x', null],
    ['`x`', null],
    ['a(b', null],
    ['a b', null],
    ['a\tb', null],
    ['a\x01b', null],
    ['a\x7fb', null],
    ["a'b", null],
    ['a"b', null],
    ['a;b', null],
    ['a|b', null],
    ['a&b', null],
    ['a<b', null],
  ])('%j', (text, literal) => expect(unquotedLiteral(text)).toBe(literal));
});

describe('doubleQuotedLiteral', () => {
  it.each<[string, string | null]>([
    ['"a b"', 'a b'],
    ['""', ''],
    ['"a\\"b"', 'a"b'],
    ['"a\\\\b"', 'a\\b'],
    ['"a\\$b"', 'a$b'],
    ['"a\\`b"', 'a`b'],
    ['"a\\nb"', 'a\\nb'],
    ['"a\\\nb"', 'ab'],
    ['"a\nb"', 'a\nb'],
    ['"$x"', null],
    ['"`x`"', null],
    ['"a"b"', null],
    ['"a\\"', null],
    ['"a', null],
    ["'a'", null],
    ['"', null],
    ['a"', null],
    ['x"y"', null],
  ])('%j', (text, literal) => expect(doubleQuotedLiteral(text)).toBe(literal));
});

describe('isDangerousVariable', () => {
  it.each([
    ['PATH', true],
    ['IFS', true],
    ['BASH_ENV', true],
    ['BASH_FUNC_x%%', true],
    ['ENV', true],
    ['LD_PRELOAD', true],
    ['PS4', true],
    ['NODE_OPTIONS', true],
    ['BASHOPTS', true],
    ['SHELLOPTS', true],
    ['PROMPT_COMMAND', true],
    ['CDPATH', true],
    ['GLOBIGNORE', true],
    ['EXECIGNORE', true],
    ['HOSTALIASES', true],
    ['LOCPATH', true],
    ['GCONV_PATH', true],
    ['PYTHONSTARTUP', true],
    ['PERL5OPT', true],
    ['LD_LIBRARY_PATH', true],
    ['XPATH', false],
    ['PATH_', false],
    ['NODE_OPTIONSX', false],
    ['PATHX', false],
    ['MYPATH', false],
    ['HOME', false],
    ['x', false],
  ])('%s', (name, dangerous) => expect(isDangerousVariable(name)).toBe(dangerous));
});

describe('the simple commands of a line, and their literal words', () => {
  it.each<[string, (string | null)[][]]>([
    ['ls -la', [['ls', '-la']]],
    ['echo "a b" \'c d\' e\\ f', [['echo', 'a b', 'c d', 'e f']]],
    ['echo "a\nb"', [['echo', 'a\nb']]],
    ["echo a'b'\"c\"", [['echo', 'abc']]],
    ["r''m -rf x", [['rm', '-rf', 'x']]],
    ['"rm" x', [['rm', 'x']]],
    ["$'rm' x", [[null, 'x']]],
    ['$"rm" x', [[null, 'x']]],
    ['$X$Y -rf x', [[null, '-rf', 'x']]],
    ['echo $HOME ${X} $((1+2))', [['echo', null, null, null]]],
    ['ls; pwd & wc -l | cat && true || false', [['ls'], ['pwd'], ['wc', '-l'], ['cat'], ['true'], ['false']]],
    ['echo hi # it\'s\nrm -rf a\n# \'', [['echo', 'hi'], ['rm', '-rf', 'a']]],
    ["echo $'\\''; rm -rf b; echo \\'", [['echo', null], ['rm', '-rf', 'b'], ['echo', "'"]]],
    // A substitution runs before the command that holds it: inner commands come first.
    ['echo $(rm a) `rm b` <(rm c) >(rm d)', [['rm', 'a'], ['rm', 'b'], ['rm', 'c'], ['rm', 'd'], ['echo', null, null, null, null]]],
    ['echo "$(rm a)"', [['rm', 'a'], ['echo', null]]],
    ['echo ${x:-$(rm y)}', [['rm', 'y'], ['echo', null]]],
    ['(cd a && ls) | wc', [['cd', 'a'], ['ls'], ['wc']]],
    ['{ ls; pwd; }', [['ls'], ['pwd']]],
    ['f() { rm x; }; f', [['rm', 'x'], ['f']]],
    ['if a; then b; elif c; then d; else e; fi', [['a'], ['b'], ['c'], ['d'], ['e']]],
    ['while a; do b; done; until c; do d; done', [['a'], ['b'], ['c'], ['d']]],
    ['for i in $(rm l); do echo $i; done', [['rm', 'l'], ['echo', null]]],
    ['case $(rm c) in x) rm y;; *) ls;; esac', [['rm', 'c'], ['rm', 'y'], ['ls']]],
    ['! rm x', [['rm', 'x']]],
    ['cat <<EOF\n$(rm h)\nEOF', [['cat'], ['rm', 'h']]],
    ["cat <<'EOF'\n$(rm h)\nEOF", [['cat']]],
    ['cat <<< "$(rm s)"', [['rm', 's'], ['cat']]],
    ['echo > "$(rm t)"', [['echo'], ['rm', 't']]],
    ['X=1 Y=$(rm v) ls', [['rm', 'v'], ['ls']]],
    ['X=1', []],
    ['> f', []],
    ['export A=1 B; unset C', [['export', 'A=1', 'B'], ['unset', 'C']]],
    ['export A=$(rm e)', [['rm', 'e'], ['export', null]]],
    ['local -a x', [['local', '-a', 'x']]],
    ['[ -f x ] && echo y', [['[', null], ['echo', 'y']]],
    ['[[ -f $(rm t) ]]', [['rm', 't']]],
    ['time ls', [['time', 'ls']]],
    ['echo {} x {', [['echo', '{}', 'x', '{']]],
    ['echo a{b,c}d', [['echo', null]]],
    ['echo *.txt ~/x', [['echo', null, null]]],
  ])('%j', (line, expected) => expect(words(line)).toEqual(expected));

  it('keeps assignments before a command with the command, and standalone ones apart', () => {
    const analysis = read('NODE_ENV=test PORT=$(x) npm start; A=1; B=c d');
    expect(analysis.commands.map((c) => c.assignments)).toEqual([
      [],
      [
        { name: 'NODE_ENV', value: 'test' },
        { name: 'PORT', value: null },
      ],
      [{ name: 'B', value: 'c' }],
    ]);
    expect(analysis.commands.map((c) => c.words)).toEqual([['x'], ['npm', 'start'], ['d']]);
    expect(analysis.assignments).toEqual([{ name: 'A', value: '1' }]);
    expect(read('A[1]=x').assignments).toEqual([{ name: 'A', value: 'x' }]);
    expect(read('A+=x').assignments).toEqual([{ name: 'A', value: null }]);
    expect(read('A=').assignments).toEqual([{ name: 'A', value: '' }]);
    expect(read('ls').commands[0]!.text).toBe('ls');
  });
});

describe('doubts: what bash may run that the words do not show', () => {
  it.each<[string, RegExp]>([
    ['if; then fi', /does not parse cleanly/],
    ['echo (', /does not parse cleanly/],
    ['{rm,-rf,x}', /does not parse cleanly/],
    ['r\\\nm -rf x', /joins a word to the next line/],
    ['echo a\\\nb', /joins a word to the next line/],
    ['echo hi\rrm -rf x', /control character/],
    ['echo a\x00b', /control character/],
    ['printf x 2>&1\n\\rm y', /runs across a blank|words after a redirection/],
    ['true < in \\\n  --flag', /words after a redirection/],
    ['PATH=.:$PATH; ls', /sets PATH/],
    ['IFS=x ls', /sets IFS/],
    ['LD_PRELOAD=x.so ls', /sets LD_PRELOAD/],
    ['export PATH=/x', /sets PATH/],
    ['export PATH', /declares PATH/],
    ['declare -n r=x', /declare -n makes later assignments/],
    ['local -i n', /local -i makes later assignments/],
    ['typeset -ai n', /typeset -ai/],
    ['declare $x', /declare with a word Warden cannot read/],
    ["x='a[$(rm y)]'; echo $((x))", /arithmetic beside variables/],
    ["read x; [[ $x -eq 1 ]]", /arithmetic beside variables/],
    ['for x in a; do echo $((x)); done', /arithmetic beside variables/],
    ['for ((i=0; i<2; i++)); do echo; done', /arithmetic beside variables/],
    ['x=1; let y=x', /arithmetic beside variables/],
    ['x=1; echo ${a[x]}', /arithmetic beside variables/],
    ['a[$(rm i)]=1', /arithmetic beside variables|substitution inside arithmetic/],
    ['echo $(( $(cat f) ))', /substitution inside arithmetic/],
    ['(( $(rm x) ))', /substitution inside arithmetic/],
    ['[[ $(cat f) -eq 1 ]]', /substitution inside arithmetic/],
    ['[[ ${x:-$(cat f)} -gt 1 ]]', /substitution inside arithmetic/],
    ['ls <> f', /does not parse cleanly/],
    ["test -v 'a[$(rm x)]'", /subscript that runs a command/],
    ['test -v "a[$(rm x)]"', /test with a word Warden cannot read/],
    ["[ -v 'a[`rm x`]' ]", /subscript that runs a command/],
    ["declare 'a[$(rm x)]=1'", /subscript that runs a command/],
    ["unset 'a[$(rm x)]'", /subscript that runs a command/],
    ['unset $(cat f)', /unset with a word Warden cannot read/],
    ['read $(cat f) < g', /read with a word Warden cannot read/],
    ['printf -v $(cat f) x', /printf with a word Warden cannot read/],
    ['test -v $(cat f)', /test with a word Warden cannot read/],
    ['x=y; echo ${!x}', /\$\{!name\} beside variables/],
    ["x='$(rm y)'; echo ${x@P}", /prompt/],
  ])('%j', (line, why) => {
    const { doubts } = read(line);
    expect(doubts.join(' | ')).toMatch(why);
  });

  it.each([
    'ls -la',
    'echo $((1+2))',
    'x=1; echo $x',
    'for x in a b; do echo $x; done',
    '[[ -f x ]] && echo $(( 2 * 3 ))',
    'echo a\\\\\nls',
    'npm test \\\n  --grep x',
    "echo 'a\\\nb'",
    'echo "a\\\nb"',
    '# only a comment',
    'unset PATHS',
    'declare -a list',
    'export -p',
    'printf %s $(cat f)',
    'echo ${!PREFIX*}',
    "echo 'a[1]' \"[x]\"",
    // Every construct the walk knows, in no doubt where nothing in it is.
    'echo "a b" \'c d\' e\\ f',
    "$'rm' x",
    '$"rm" x',
    'ls; pwd & wc -l | cat && true || false',
    '(cd a && ls) | wc',
    '{ ls; pwd; }',
    'f() { rm x; }; f',
    'if a; then b; elif c; then d; else e; fi',
    'while a; do b; done; until c; do d; done',
    'for i in $(rm l); do echo $i; done',
    'case $(rm c) in x) rm y;; *) ls;; esac',
    '! rm x',
    'cat <<EOF\n$(rm h)\nEOF',
    "cat <<'EOF'\n$(rm h)\nEOF",
    'cat <<-EOF\n\tx\n\tEOF',
    'cat <<< "$(rm s)"',
    'echo > "$(rm t)"',
    'X=1 Y=$(rm v) ls',
    '> f',
    'export A=1 B; unset C',
    'local -a x',
    '[ -f x ] && echo y',
    '[[ -f $(rm t) ]]',
    'time ls',
    'echo {} x {',
    'echo a{b,c}d',
    'echo *.txt ~/x',
    'echo <(ls) >(wc)',
    'a=(1 2 3)',
    '[[ a == b* ]]',
    '[[ $x =~ ^a.*$ ]]',
    '[[ ! -f x || -d y ]]',
    '[[ (-f x) ]]',
    'echo $(( 1 ? 2 : 3 ))',
    'echo $(( (1+2)*3 ))',
    'echo $(( x++ ))',
    "echo $'a\\tb'",
    'echo $"hi"',
    'echo ${#x} ${x%y} ${x:-z}',
    'echo $? $$ $!',
    'ls 2>/dev/null',
    'echo "$x" "${y}"',
    'a=1 b=2',
    'for ((;;)); do break; done',
    'echo ${a[1]}',
    'echo a # b',
    'select x in a b; do echo; done',
    'ls |& cat',
    'echo $[1+2]',
    'declare -A m',
    'readonly x=1',
    'typeset y',
    'getopts a b',
    'echo {1..3}',
    // A backslash-newline inside quotes, a comment or a here-document joins nothing.
    "echo $'a\\\nb'",
    'echo a # b\\\nls',
    'cat <<EOF\na\\\nb\nEOF',
    // Tabs are blanks, not control characters.
    'echo\ta',
    // Attributes that make no name reference or integer.
    'export -n X',
    'unset -n r',
    'unset -f f',
    'declare -r x=1',
    // Reads that are safe without variables set beside them.
    'echo ${!x}',
    'echo ${x@Q}',
    '[[ 1 -eq 1 ]]',
    '[[ -v x ]]',
    '(( 1 + 2 ))',
  ])('%j is in no doubt', (line) => expect(read(line).doubts).toEqual([]));

  it.each<[string, RegExp]>([
    ['read x; (( x > 1 ))', /arithmetic beside variables/],
    ['read x; [[ $x -lt 2 ]]', /arithmetic beside variables/],
    ['read x; [ -v x ]', /arithmetic beside variables/],
    ['read x; echo ${!x}', /\$\{!name\}/],
    ['declare +n r', /declare \+n makes later assignments/],
    ['readonly -i n', /readonly -i makes later assignments/],
    ['echo a\x7fb', /control character/],
    ['echo "a\\\nb" c\\\nd', /joins a word to the next line/],
  ])('%j', (line, why) => expect(read(line).doubts.join(' | ')).toMatch(why));

  it.each([
    // Each builtin that sets a variable by name, beside arithmetic that reads it.
    'read x; echo $((x))',
    'mapfile x; echo $((x))',
    'readarray x; echo $((x))',
    'getopts a x; echo $((x))',
    'printf -v x 1; echo $((x))',
    'declare x; echo $((x))',
    'typeset x; echo $((x))',
    'local x; echo $((x))',
    'export x; echo $((x))',
    'readonly x; echo $((x))',
    '$cmd x; echo $((x))',
    'let y=x',
  ])('%j sets a variable arithmetic may read', (line) => expect(read(line).doubts.join(' | ')).toMatch(/arithmetic beside variables/));

  it.each([
    ['mapfile $(cat f)', /mapfile with a word Warden cannot read/],
    ['readarray $(cat f)', /readarray with a word Warden cannot read/],
    ['getopts a $(cat f)', /getopts with a word Warden cannot read/],
    ['let $(cat f)', /let with a word Warden cannot read/],
    ['wait $(cat f)', /wait with a word Warden cannot read/],
    ['test $(cat f)', /test with a word Warden cannot read/],
  ])('%j takes a word as a variable name', (line, why) => expect(read(line).doubts.join(' | ')).toMatch(why));

  it.each(['echo $(cat f)', 'printf %s $(cat f)', 'kill $(cat f)', 'rm $(cat f)'])('%j takes no variable name', (line) => expect(read(line).doubts).toEqual([]));

  it('a line too long to read is not read', () => {
    expect(analyzeCommand(grammar, 'x'.repeat(MAX_COMMAND_CHARS + 1))).toBeNull();
    expect(analyzeCommand(grammar, `echo ${'x'.repeat(MAX_COMMAND_CHARS - 5)}`)).not.toBeNull();
  });
});

describe('writesFiles: a redirection that writes a file', () => {
  it.each<[string, boolean]>([
    ['ls', false],
    ['ls > out', true],
    ['ls >> out', true],
    ['ls >| out', true],
    ['ls &> out', true],
    ['ls &>> out', true],
    ['ls >& out', true],
    ['ls 2> err', true],
    ['ls > $(x)', true],
    ['ls > /dev/null', false],
    ['ls 2>/dev/null', false],
    ['ls &>/dev/null', false],
    ['ls > /dev/stderr', false],
    ['ls > /dev/nullx', true],
    ['ls 2>&1', false],
    ['ls >&2', false],
    ['ls 1>&-', false],
    ['ls 3<&-', false],
    ['ls <&0', false],
    ['ls < in', false],
    ['cat <<< x', false],
    ['cat <<EOF\nx\nEOF', false],
    ['cat <<EOF > out\nx\nEOF', true],
    ['{ ls; } > out', true],
    ['echo $(ls > out)', true],
  ])('%j', (line, writes) => expect(read(line).writesFiles).toBe(writes));
});
