import { describe, expect, it } from 'vitest';
import { splitArgv } from './argv';

const words = (text: string) => {
  const r = splitArgv(text);
  if (!r.ok) throw new Error(r.error);
  return r.argv;
};

describe('splitArgv', () => {
  it('gives no words for empty or blank input', () => {
    expect(words('')).toEqual([]);
    expect(words('   \t \n ')).toEqual([]);
  });

  it('splits on runs of blanks', () => {
    expect(words('  python3   train.py\t--epochs 3 ')).toEqual(['python3', 'train.py', '--epochs', '3']);
  });

  it('keeps single-quoted text literally, backslashes and double quotes included', () => {
    expect(words(`echo 'a  b' 'c\\d' '"q"'`)).toEqual(['echo', 'a  b', 'c\\d', '"q"']);
  });

  it('reads double quotes: backslash escapes only $ ` " \\ and newline', () => {
    expect(words(`echo "a \\"b\\" \\$HOME \\\\ \\n"`)).toEqual(['echo', 'a "b" $HOME \\ \\n']);
    expect(words('echo "one\\\ntwo"')).toEqual(['echo', 'onetwo']);
  });

  it('joins adjacent quoted and unquoted parts into one word', () => {
    expect(words(`--name="my run"'s'x`)).toEqual(['--name=my runsx']);
  });

  it('keeps empty quoted words', () => {
    expect(words(`printf '%s|' "" ''`)).toEqual(['printf', '%s|', '', '']);
  });

  it('escapes with an unquoted backslash, and joins lines at backslash-newline', () => {
    expect(words('touch my\\ file \\"x\\"')).toEqual(['touch', 'my file', '"x"']);
    expect(words('make \\\n  test')).toEqual(['make', 'test']);
  });

  it('refuses an unclosed quote and a trailing backslash, saying where', () => {
    expect(splitArgv(`echo 'oops`)).toEqual({ ok: false, error: "The ' at character 6 is never closed." });
    expect(splitArgv('echo "oops\\"')).toEqual({ ok: false, error: 'The " at character 6 is never closed.' });
    expect(splitArgv('echo \\')).toMatchObject({ ok: false });
  });

  it('reports the first unquoted shell metacharacter, and passes it on as text', () => {
    expect(splitArgv('grep -r TODO src | wc -l')).toEqual({ ok: true, argv: ['grep', '-r', 'TODO', 'src', '|', 'wc', '-l'], shellSyntax: '|' });
    expect(splitArgv('ls *.py')).toMatchObject({ shellSyntax: '*' });
    expect(splitArgv('echo $HOME')).toMatchObject({ shellSyntax: '$' });
    expect(splitArgv('echo "$HOME"')).toMatchObject({ shellSyntax: '$' });
    expect(splitArgv('cat ~/x')).toMatchObject({ shellSyntax: '~' });
    expect(splitArgv('echo a~b x#y')).toMatchObject({ shellSyntax: null });
    expect(splitArgv("echo '|' \\; \"*\"")).toEqual({ ok: true, argv: ['echo', '|', ';', '*'], shellSyntax: null });
  });
});
