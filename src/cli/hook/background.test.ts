import { beforeAll, describe, expect, it } from 'vitest';
import { backgroundOf } from './background';
import { loadBashGrammar, type BashGrammar } from './bash-grammar';

let grammar: BashGrammar;
beforeAll(async () => {
  grammar = await loadBashGrammar();
});

const read = (line: string) => grammar.withTree(line, (root) => backgroundOf(root, line));

describe('how a line uses &', () => {
  it.each([
    ['npm run dev &', { kind: 'whole', command: 'npm run dev' }],
    ['npm run dev   &  ', { kind: 'whole', command: 'npm run dev' }],
    ['cd app && npm run dev > log 2>&1 &', { kind: 'whole', command: 'cd app && npm run dev > log 2>&1' }],
    ['npm run dev & # the server', { kind: 'whole', command: 'npm run dev' }],
    ['npm run dev & sleep 3; curl x', { kind: 'inner' }],
    ['a & b &', { kind: 'inner' }],
    ['(a &)', { kind: 'inner' }],
    ['echo "a & b"', { kind: 'none' }],
    ['a && b', { kind: 'none' }],
    ['ls > x 2>&1', { kind: 'none' }],
    ['npm test', { kind: 'none' }],
  ])('%j is %j', (line, expected) => {
    expect(read(line)).toEqual(expected);
  });
});
