// The manifests' YAML read back by a real parser (the yaml package, YAML
// 1.2, and its 1.1 mode, which kubectl's older readers follow): every value
// comes back as it went in, whatever a string holds.

import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { scalar, toYaml, type Json } from './yaml';

const TRICKY = [
  '', ' ', ' lead', 'trail ', 'yes', 'No', 'ON', 'off', 'y', 'N', 'true', 'False', 'null', 'Null', '~', '1e3', '0x10', '0o17', '017', '1_000', '.5', '+1', '-1', '.inf', '-.inf', '.nan',
  '2024-01-01', '12:30', '30m', '2Gi', '- a', '-', '--', '--limit', '--limit=30m', '-c', 'a: b', 'a:b', 'a:', ':a', '#c', 'a #c', 'a#c', '*ref', '&a', '!tag', '%x', '@x', '`x', '{a}', '[a]', '|', '>', "'", '"',
  'line\nnext', 'tab\there', '\u0001', 'é', '日本', '🙂', 'warden', '/dev/termination-log', 'registry.example.com/trainer:1.4', 'http://x/y', 'a b', 'batch/v1', '<<', '=', '?', '? x', 'x,y', 'a\\b',
];

describe('toYaml', () => {
  it('every tricky string comes back as itself, as a value, a key and a list item, in YAML 1.2 and 1.1', () => {
    for (const text of TRICKY) {
      const doc: Json = { [text]: text, list: [text, { [text]: [text] }], nested: { deeper: text } };
      const yaml = toYaml(doc);
      expect(parse(yaml), `${JSON.stringify(text)}:\n${yaml}`).toEqual(doc);
      expect(parse(yaml, { version: '1.1' }), `${JSON.stringify(text)} (1.1):\n${yaml}`).toEqual(doc);
    }
  });

  it('numbers, booleans, null, empty collections and lists of lists come back', () => {
    const doc: Json = { n: 0, big: 2147483647, neg: -3, frac: 0.5, t: true, f: false, none: null, emptyList: [], emptyMap: {}, grid: [[1, 2], [], [{}], [['deep']]], items: [{ a: 1, b: [{ c: 'x' }] }, 'plain', 7] };
    expect(parse(toYaml(doc))).toEqual(doc);
  });

  it('leaves out undefined fields, as JSON does', () => {
    expect(toYaml({ a: 1, b: undefined })).toBe('a: 1\n');
  });

  it('writes lists under a key at the key\'s indent, and plain words unquoted, as kubectl does', () => {
    expect(toYaml({ spec: { containers: [{ name: 'task', args: ['--limit', '30m'] }] } })).toBe(
      ['spec:', '  containers:', '  - name: task', '    args:', '    - --limit', '    - "30m"', ''].join('\n'),
    );
    expect(toYaml({ values: [124, 125], mixed: [1, 'a'] })).toBe(['values: [124, 125]', 'mixed:', '- 1', '- a', ''].join('\n'));
    expect(toYaml({})).toBe('{}\n');
    expect(toYaml([])).toBe('[]\n');
  });

  it('scalars: plain where safe, JSON where not; a non-finite number is refused', () => {
    expect(scalar('FailJob')).toBe('FailJob');
    expect(scalar('k8s:ns/pod')).toBe('k8s:ns/pod');
    expect(scalar('yes')).toBe('"yes"');
    expect(scalar('a: b')).toBe('"a: b"');
    expect(scalar(null)).toBe('null');
    expect(scalar(false)).toBe('false');
    expect(scalar(124)).toBe('124');
    expect(() => scalar(Number.NaN)).toThrow(/finite/);
    expect(() => scalar(Infinity)).toThrow(/finite/);
  });
});
