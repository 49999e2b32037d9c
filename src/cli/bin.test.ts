// bin/warden.mjs on a checkout as `npm install` leaves it: no bundle yet, so
// the first call builds it (saying so once on stderr) and the next ones run
// it as it is; a changed source is rebuilt; and where building fails the
// command still works, from the sources through tsx. Each case runs on a
// copy of the package (bin, scripts, src, runtime) with its own out/.

import { execa } from 'execa';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, utimesSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const ROOT = resolve(__dirname, '../..');
const copies: string[] = [];

/** A copy of the package; node_modules linked whole, or package by package without the ones named. */
function copyOfPackage(without: string[] = []): string {
  const dir = mkdtempSync(join(tmpdir(), 'wbin-'));
  copies.push(dir);
  for (const part of ['bin', 'scripts', 'src', 'runtime', 'package.json']) cpSync(join(ROOT, part), join(dir, part), { recursive: true });
  if (without.length === 0) {
    symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'));
  } else {
    mkdirSync(join(dir, 'node_modules'));
    for (const name of readdirSync(join(ROOT, 'node_modules'))) {
      if (!without.includes(name)) symlinkSync(join(ROOT, 'node_modules', name), join(dir, 'node_modules', name));
    }
  }
  return dir;
}

function wardenIn(dir: string, args: string[]) {
  const state = join(dir, 'state');
  return execa(process.execPath, [join(dir, 'bin', 'warden.mjs'), ...args], { reject: false, env: { WARDEN_STATE_DIR: state, WARDEN_EMBEDDED: '1' }, timeout: 120_000 });
}

afterAll(() => {
  for (const dir of copies) rmSync(dir, { recursive: true, force: true });
});

describe('bin/warden.mjs', () => {
  it('builds the bundle on the first call, says so once, and rebuilds after a source changes', async () => {
    const dir = copyOfPackage();
    expect(existsSync(join(dir, 'out'))).toBe(false);
    const first = await wardenIn(dir, ['run', '--json', '--', 'bash', '-c', 'echo built']);
    expect(first.exitCode).toBe(0);
    expect(JSON.parse(first.stdout)).toMatchObject({ verdict: 'completed', stdout: 'built\n' });
    expect(first.stderr.match(/building the CLI/g)).toHaveLength(1);
    expect(existsSync(join(dir, 'out', 'cli', 'current', 'warden.mjs'))).toBe(true);

    const second = await wardenIn(dir, ['--version']);
    expect(second.exitCode).toBe(0);
    expect(second.stderr).toBe('');

    const later = new Date(Date.now() + 5000);
    utimesSync(join(dir, 'src', 'cli', 'render.ts'), later, later);
    const third = await wardenIn(dir, ['--version']);
    expect(third.exitCode).toBe(0);
    expect(third.stderr).toMatch(/^warden: building the CLI/);
  });

  it('runs from the sources through tsx when the bundle cannot be built', async () => {
    const dir = copyOfPackage(['esbuild', '@esbuild']);
    const result = await wardenIn(dir, ['run', '--json', '--', 'bash', '-c', 'echo from-sources']);
    expect(result.exitCode).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ verdict: 'completed', stdout: 'from-sources\n' });
    expect(result.stderr).toMatch(/building the CLI failed .*running from the sources through tsx instead/);
    expect(existsSync(join(dir, 'out', 'cli', 'current'))).toBe(false);
  });
});
