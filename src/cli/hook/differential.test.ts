// The hook against bash itself: each line of a corpus (differential/corpus.ts)
// is judged by the hook's rules, and each line the hook allows is run by bash
// with every command it starts traced (differential/trace.ts). No command bash
// starts may be one the rules do not allow (differential/oracle.ts): that is
// what "allow" promises. The same for Codex's and Gemini CLI's rules: a line
// the hook rewrites (its rules do not touch it) must not start a command
// those rules are about. `npm test` runs the named lines and 400 generated
// ones; `npm run test:hook-corpus` runs 6,000.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadBashGrammar, type BashGrammar } from './bash-grammar';
import { generate, NAMED, RULE_SETS } from './differential/corpus';
import { ruleBreach } from './differential/oracle';
import { makeTracer, parseXtrace, type Tracer } from './differential/trace';
import { decideClaude, emptyRules, touches } from './rules';
import { analyzeCommand } from './walk';

const FULL = process.env.WARDEN_HOOK_CORPUS === 'all';
const LINES = [...Object.entries(NAMED).map(([name, line]) => ({ name, line })), ...generate(FULL ? 6000 : 400).map((line, i) => ({ name: `generated #${i}`, line }))];

let grammar: BashGrammar;
let tracer: Tracer;
beforeAll(async () => {
  grammar = await loadBashGrammar();
  tracer = makeTracer();
});
afterAll(() => tracer?.close());

describe('the tracer sees what bash starts', () => {
  it('finds the commands the old splitter missed, so the oracle can fail', async () => {
    const echoOnly = RULE_SETS[0]!.rules;
    for (const name of ['a comment holding a quote hides the next line', 'an ANSI-C string holding a quote hides what follows']) {
      const { commands } = await tracer.trace(NAMED[name]!);
      expect(commands.some((c) => c[0] === 'rm'), name).toBe(true);
      expect(ruleBreach(commands, echoOnly)).toMatch(/no allow rule matches/);
    }
    for (const name of ['arithmetic runs an array subscript', 'test -v evaluates a subscript', 'an indirect expansion of a name set here']) {
      const { commands } = await tracer.trace(NAMED[name]!);
      expect(commands.some((c) => c[0] === 'rm'), name).toBe(true);
    }
    const { commands } = await tracer.trace(NAMED['variables spell the command name']!);
    expect(commands).toContainEqual(['rm', '-rf', 'x']);
    expect(ruleBreach(commands, RULE_SETS[1]!.rules)).toMatch(/deny rule Bash\(rm:\*\)/);
  });

  it('reads bash quoting in xtrace records', () => {
    expect(parseXtrace("\x1eecho 'a b' 'it'\\''s' $'x\\ny' c\\ d\n\x1e\x1erm -rf z\n")).toEqual([
      ['echo', 'a b', "it's", 'x\ny', 'c d'],
      ['rm', '-rf', 'z'],
    ]);
    expect(parseXtrace("\x1eprintf 'l1\nl2'\n")).toEqual([['printf', 'l1\nl2']]);
  });
});

describe('Claude Code: a line the hook allows starts only what the rules allow', () => {
  for (const set of RULE_SETS) {
    it(set.name, async () => {
      const breaches: string[] = [];
      let allowed = 0;
      for (const { name, line } of LINES) {
        const verdict = decideClaude(analyzeCommand(grammar, line), { ...emptyRules(), ...set.rules }, 'default');
        if (verdict.decision !== 'allow') continue;
        allowed++;
        const breach = ruleBreach((await tracer.trace(line)).commands, set.rules);
        if (breach !== null) breaches.push(`${name} ${JSON.stringify(line)}: ${breach}`);
      }
      expect(breaches).toEqual([]);
      // Not vacuous: the corpus has lines each rule set allows.
      expect(allowed).toBeGreaterThan(FULL ? 100 : 10);
    });
  }
});

describe('Codex and Gemini CLI: a line the hook rewrites starts nothing their rules are about', () => {
  const prefixes = [['rm'], ['git', 'push'], ['curl']];
  it('prefix rules rm, git push and curl', async () => {
    const rules = { allow: ['Bash'], ask: [], deny: prefixes.map((p) => `Bash(${p.join(' ')}:*)`) };
    const breaches: string[] = [];
    let rewritten = 0;
    for (const { name, line } of LINES) {
      const analysis = analyzeCommand(grammar, line);
      if (prefixes.some((p) => touches(analysis, p))) continue;
      rewritten++;
      const breach = ruleBreach((await tracer.trace(line)).commands, rules);
      if (breach !== null) breaches.push(`${name} ${JSON.stringify(line)}: ${breach}`);
    }
    expect(breaches).toEqual([]);
    expect(rewritten).toBeGreaterThan(FULL ? 100 : 10);
  });
});
