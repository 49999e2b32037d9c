import { execFileSync } from 'node:child_process';
import { beforeAll, describe, expect, it } from 'vitest';
import { loadBashGrammar, type BashGrammar } from './bash-grammar';
import { generate, NAMED } from './differential/corpus';
import { plainLine } from './plain-line';
import { analyzeCommand } from './walk';

let grammar: BashGrammar;
beforeAll(async () => {
  grammar = await loadBashGrammar();
});

const one = (words: string[], text: string) => ({ commands: [{ words, assignments: [], text }], assignments: [], doubts: [], writesFiles: false });

describe('a line of plain words', () => {
  it.each([
    ['npm test -- --grep parser', one(['npm', 'test', '--', '--grep', 'parser'], 'npm test -- --grep parser')],
    ['  git\tstatus  ', one(['git', 'status'], 'git\tstatus')],
    ['ls', one(['ls'], 'ls')],
    ['ls done in then', one(['ls', 'done', 'in', 'then'], 'ls done in then')],
    ['pytest --maxfail=1 a/b_c.py::t', one(['pytest', '--maxfail=1', 'a/b_c.py::t'], 'pytest --maxfail=1 a/b_c.py::t')],
    ['node -e 0 user@host a+b a,b', one(['node', '-e', '0', 'user@host', 'a+b', 'a,b'], 'node -e 0 user@host a+b a,b')],
    ['/bin/rm -rf x', one(['/bin/rm', '-rf', 'x'], '/bin/rm -rf x')],
    ['-x', one(['-x'], '-x')],
  ])('%j is its words', (line, analysis) => {
    expect(plainLine(line)).toEqual(analysis);
  });

  it.each([
    '', ' \t ', 'a=b', 'X=1 npm test', 'time ls', '! ls', 'if', 'coproc ls', 'function', 'while', 'until', 'select', 'case', 'for', '{', '[[',
    "echo 'a'", 'echo "a"', 'echo $HOME', 'echo `id`', 'echo a\\ b', 'ls *', 'ls a?', 'ls [ab]', 'ls ~', 'echo a # b', 'echo {a,b}',
    'ls > out', 'ls < in', 'ls | wc', 'ls; rm x', 'ls & rm x', 'ls\nrm x', 'ls\rrm', 'echo %1', 'echo (a)', 'echo a!', 'rm\u00a0-rf', 'echo é',
  ])('%j goes to the grammar', (line) => {
    expect(plainLine(line)).toBeNull();
  });
});

// Random lines of plain words and of the characters around them; each line plainLine reads must be read the same by the grammar.
function plainish(count: number): string[] {
  let seed = 31;
  const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31);
  const plain = ['a', 'Z', '0', '_', '.', '/', ':', '@', '+', ',', '=', '-', ' ', ' ', '\t', 'if', 'time', 'done', 'x=1', '--', 'npm', 'in'];
  const other = ['#', '$', '"', "'", '\\', '*', '~', '!', '{', '%', '&', ';', '\n', '(', 'é', '\r'];
  return Array.from({ length: count }, (_, i) => {
    // Two lines in three of plain pieces only, the third with one other character somewhere.
    const pieces = Array.from({ length: 1 + (next() % 12) }, () => plain[next() % plain.length]!);
    if (i % 3 === 2) pieces.splice(next() % (pieces.length + 1), 0, other[next() % other.length]!);
    return pieces.join('');
  });
}

describe('plain words are read as bash and the grammar read them', () => {
  it('for the hook corpus and 4,000 lines near plain words', () => {
    const lines = [...Object.values(NAMED), ...generate(400), ...plainish(4000)].filter((line) => plainLine(line) !== null);
    expect(lines.length).toBeGreaterThan(1000);
    // bash itself: each line's words printed NUL-separated, the lines apart by \x01 (the lines hold neither, nor any quote).
    const script = lines.map((line) => `printf '%s\\0' ${line}; printf '\\1'`).join('\n');
    const printed = execFileSync('bash', ['-c', script], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 }).split('\x01').slice(0, -1);
    expect(printed).toHaveLength(lines.length);
    let grammarDisagreed = 0;
    lines.forEach((line, i) => {
      const read = plainLine(line)!;
      expect(read.commands[0]!.words, JSON.stringify(line)).toEqual(printed[i]!.split('\0').slice(0, -1));
      const byGrammar = analyzeCommand(grammar, line)!;
      // The grammar takes a word that starts with a reserved word (time+x) for that word and fails to parse: it doubts, bash does not.
      if (byGrammar.doubts.some((d) => d.includes('does not parse cleanly'))) grammarDisagreed++;
      else expect(read, JSON.stringify(line)).toEqual(byGrammar);
    });
    expect(grammarDisagreed).toBeLessThan(lines.length / 20);
  });
});
