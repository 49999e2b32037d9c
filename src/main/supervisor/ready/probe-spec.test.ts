// Every form of a readiness probe, and every way one is refused (one line each).

import { describe, expect, it } from 'vitest';
import { MAX_PROBE_CHARS, MAX_PROBES, parseProbe, parseProbes, parseStatusRange, portNumber } from './probe-spec';

describe('parseProbe', () => {
  const accepted: [string, Record<string, unknown>][] = [
    ['port', { kind: 'port', port: null }],
    ['port:5173', { kind: 'port', port: 5173 }],
    ['port:1', { kind: 'port', port: 1 }],
    ['port:65535', { kind: 'port', port: 65535 }],
    ['tcp:5173', { kind: 'tcp', host: null, port: 5173 }],
    ['tcp:localhost:8080', { kind: 'tcp', host: 'localhost', port: 8080 }],
    ['tcp:127.0.0.1:1', { kind: 'tcp', host: '127.0.0.1', port: 1 }],
    ['tcp:[::1]:65535', { kind: 'tcp', host: '::1', port: 65535 }],
    ['exec:curl -sf http://x/', { kind: 'exec', command: 'curl -sf http://x/' }],
    ['exec:  test -e x  ', { kind: 'exec', command: 'test -e x' }],
    ['file:/tmp/ready', { kind: 'file', path: '/tmp/ready' }],
    ['file:out/x.sock', { kind: 'file', path: 'out/x.sock' }],
  ];
  it.each(accepted)('%s', (text, fields) => {
    expect(parseProbe(text)).toMatchObject({ text, ...fields });
  });

  it('http and https URLs keep their URL', () => {
    const probe = parseProbe('http://localhost:5173/health?x=1');
    expect(probe.kind).toBe('http');
    expect(probe.kind === 'http' && probe.url.href).toBe('http://localhost:5173/health?x=1');
    expect(parseProbe('https://127.0.0.1/').kind).toBe('http');
  });

  it('log patterns compile with their flags', () => {
    const probe = parseProbe('log:/Local:\\s+http:\\/\\/\\S+:(\\d+)/i');
    expect(probe.kind).toBe('log');
    if (probe.kind !== 'log') return;
    expect(probe.regex.flags).toBe('i');
    expect(probe.regex.exec('  LOCAL:   http://localhost:5173/')?.[1]).toBe('5173');
    const plain = parseProbe('log:/ready/');
    expect(plain.kind === 'log' && plain.regex.flags).toBe('');
    const all = parseProbe('log:/a/imsu');
    expect(all.kind === 'log' && all.regex.flags).toBe('imsu');
    // The last slash ends the pattern: slashes inside it stay.
    const slashes = parseProbe('log:/a/b/');
    expect(slashes.kind === 'log' && slashes.regex.source).toBe('a\\/b');
  });

  const refused: [unknown, RegExp][] = [
    [5173, /is text such as/],
    ['', /is not one Warden knows: tcp:\[HOST:\]PORT, http/],
    ['ports', /is not one Warden knows/],
    ['ftp://x/', /is not one Warden knows/],
    ['port:', /needs a port from 1 to 65535 after port:/],
    ['port:0', /needs a port from 1 to 65535/],
    ['port:65536', /needs a port/],
    ['port:80a', /needs a port/],
    ['tcp:', /needs a port from 1 to 65535, not ""/],
    ['tcp:0', /needs a port/],
    ['tcp:65536', /needs a port/],
    ['tcp:abc', /needs a port/],
    ['tcp::80', /names no host/],
    ['tcp:a b:80', /names no host/],
    ['tcp:a/b:80', /names no host/],
    ['tcp:::1:80', /needs brackets around an IPv6 address/],
    ['tcp:[::1]', /needs an IPv6 address in brackets, then a colon/],
    ['tcp:[::1]:', /needs a port/],
    ['tcp:[::1]:99999', /needs a port/],
    ['http://', /is not a URL/],
    ['http://user:pw@localhost/', /carries a user or password/],
    ['http://user@localhost/', /carries a user or password/],
    ['log:ready', /needs a pattern between slashes/],
    ['log:/ready', /needs a pattern between slashes/],
    ['log:/', /needs a pattern between slashes/],
    ['log://', /has an empty pattern/],
    ['log:/a/g', /takes the flags i, m, s and u/],
    ['log:/a/y', /takes the flags/],
    ['log:/a/ii', /each once/],
    ['log:/(/', /is not a valid regular expression/],
    ['exec:', /names no command/],
    ['exec:   ', /names no command/],
    ['file:', /names no file/],
    ['file: ', /names no file/],
    ['tcp:80\0', /NUL/],
    [`exec:${'x'.repeat(MAX_PROBE_CHARS)}`, /is over 4096 characters/],
  ];
  it.each(refused)('refuses %j in one line', (text, message) => {
    let caught: unknown;
    try {
      parseProbe(text);
    } catch (error) {
      caught = error;
    }
    expect(caught).toMatchObject({ kind: 'bad-input' });
    const line = (caught as Error).message;
    expect(line).toMatch(message);
    expect(line).not.toContain('\n');
  });

  it('cuts a long probe in its message', () => {
    expect(() => parseProbe(`nope${'x'.repeat(200)}`)).toThrow(/"nopex{73}\.\.\."/);
  });

  it('takes a probe of exactly the longest length', () => {
    const text = `exec:${'x'.repeat(MAX_PROBE_CHARS - 5)}`;
    expect(parseProbe(text).kind).toBe('exec');
  });
});

describe('portNumber', () => {
  it.each([
    ['1', 1],
    ['80', 80],
    ['65535', 65535],
    ['0', null],
    ['65536', null],
    ['', null],
    ['-1', null],
    ['1e3', null],
    ['123456', null],
    [' 80', null],
  ] as const)('%j', (text, port) => expect(portNumber(text)).toBe(port));
});

describe('parseProbes', () => {
  it('parses each, in order', () => {
    expect(parseProbes(['port', 'tcp:80']).map((p) => p.kind)).toEqual(['port', 'tcp']);
  });
  it.each([
    [[], /a list of 1 to 16 probes/],
    ['port', /a list of 1 to 16/],
    [undefined, /a list of 1 to 16/],
    [Array.from({ length: MAX_PROBES + 1 }, () => 'port'), /at most 16 readiness probes, not 17/],
  ] as const)('refuses %j', (probes, message) => expect(() => parseProbes(probes)).toThrow(message));
  it('takes exactly the most', () => {
    expect(parseProbes(Array.from({ length: MAX_PROBES }, () => 'port'))).toHaveLength(MAX_PROBES);
  });
});

describe('parseStatusRange', () => {
  it.each([
    ['200-399', { min: 200, max: 399 }],
    ['200-499', { min: 200, max: 499 }],
    [' 204 ', { min: 204, max: 204 }],
    ['100-599', { min: 100, max: 599 }],
    ['300 - 300', { min: 300, max: 300 }],
  ] as const)('%j', (text, range) => expect(parseStatusRange(text)).toEqual(range));
  it.each([
    ['200', null],
    ['099-200', /within 100-599/],
    ['200-600', /within 100-599/],
    ['400-200', /low end first/],
    ['2xx', /such as 200-399/],
    ['200-', /such as 200-399/],
    [200, /such as 200-399/],
  ] as const)('refuses %j', (text, message) => {
    if (message === null) return void expect(parseStatusRange(text)).toEqual({ min: 200, max: 200 });
    expect(() => parseStatusRange(text)).toThrow(message);
  });
});
