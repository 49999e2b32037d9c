// One source for error statuses: the kind table (src/shared/errors.ts). No
// other file of Warden's writes an HTTP error status or the CLI's own exit
// status (125) by hand; it names a kind and asks the table. The launcher
// (bin/warden.mjs) runs before any bundle can be loaded, so it keeps its own
// 125, checked here against the table.

import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CLI_ERROR_EXIT } from '../src/shared/errors';

const ROOT = join(import.meta.dirname, '..');

/** Files another branch is rewriting now: each still holds a literal, to be named from the table when it lands (none now). */
const PENDING: Record<string, string> = {};

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sources(path);
    return /\.tsx?$/.test(name) && !/\.test\.tsx?$/.test(name) && !/testkit/.test(name) ? [path] : [];
  });
}

/** Code only: comments and the text inside template literals that is prose (help texts) stay, so `//`-led lines and doc comments are dropped. */
function codeLines(text: string): { line: number; code: string }[] {
  return text
    .split('\n')
    .map((code, i) => ({ line: i + 1, code }))
    .filter(({ code }) => !/^\s*(\/\/|\*|\/\*)/.test(code));
}

const HAND_WRITTEN: [what: string, pattern: RegExp][] = [
  ['an HTTP error status given to HttpError', /new HttpError\(\s*\d/],
  ['an HTTP error status given to a refusal', /\brefuse\(\s*\d/],
  ['an HTTP error status written to a response', /\b(writeHead|send|sendError)\(\s*(\w+,\s*)?[45]\d\d\b/],
  ['an HTTP error status in a Response', /status:\s*[45]\d\d\b/],
  ['the CLI\'s own exit status', /(return|exit|finish|process\.exit\(|exitCode\s*=)\s*\(?\s*125\b/],
];

describe('error statuses come from the kind table only', () => {
  const files = sources(join(ROOT, 'src')).map((path) => relative(ROOT, path));

  it('finds the sources it checks', () => {
    expect(files).toContain('src/main/host/server.ts');
    expect(files).toContain('src/main/app/protocol.ts');
    expect(files).toContain('src/cli/main.ts');
    expect(files.some((f) => f.endsWith('.test.ts'))).toBe(false);
  });

  it.each(HAND_WRITTEN)('no file writes %s by hand', (_what, pattern) => {
    const found: string[] = [];
    for (const file of files) {
      if (file === 'src/shared/errors.ts' || PENDING[file]) continue;
      for (const { line, code } of codeLines(readFileSync(join(ROOT, file), 'utf8'))) if (pattern.test(code)) found.push(`${file}:${line}: ${code.trim()}`);
    }
    expect(found).toEqual([]);
  });

  it('each pending file still holds its literal (so the allowance goes when it does)', () => {
    for (const file of Object.keys(PENDING)) {
      const text = readFileSync(join(ROOT, file), 'utf8');
      expect(HAND_WRITTEN.some(([, pattern]) => codeLines(text).some(({ code }) => pattern.test(code))), `${file}: ${PENDING[file]}`).toBe(true);
    }
  });

  it('would see each kind of hand-written status (the patterns are not blind)', () => {
    const samples = ["throw new HttpError(403, 'No.');", "return refuse(404, 'Not found.');", 'res.writeHead(401, headers);', "send(res, 409, { error });", 'return new Response(text, { status: 503 });', 'return 125;', 'process.exit(125);', 'finish(125);', 'process.exitCode = 125;'];
    for (const sample of samples) expect(HAND_WRITTEN.some(([, pattern]) => pattern.test(sample)), sample).toBe(true);
    for (const fine of ["throw new HttpError('denied', 'No.');", 'res.writeHead(200, headers);', "send(res, 201, started);", 'return cliExitOf(kind);', 'const SMALL = 4095;']) {
      expect(HAND_WRITTEN.some(([, pattern]) => pattern.test(fine)), fine).toBe(false);
    }
  });

  it("the launcher's own exit status is the table's", () => {
    const launcher = readFileSync(join(ROOT, 'bin', 'warden.mjs'), 'utf8');
    const exits = [...launcher.matchAll(/process\.exit\((\d+)\)/g)].map((m) => Number(m[1]));
    expect(exits.length).toBeGreaterThan(0);
    expect(exits.every((status) => status === CLI_ERROR_EXIT)).toBe(true);
  });
});
