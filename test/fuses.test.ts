// scripts/fuses.mjs run as `npm run package` runs it, a real node process, on
// small fake binaries that carry the fuse sentinel and a wire in the layout
// @electron/fuses reads (the sentinel, the wire's version byte, its length
// byte, then one byte per fuse: '0' off, '1' on, 'r' removed): the bytes
// after it ran, every other byte untouched, and one line (never a stack) with
// the right exit status for each kind of bad input, the file left as it was.

import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = join(__dirname, '..');
const SCRIPT = join(ROOT, 'scripts', 'fuses.mjs');
const SENTINEL = 'dL7pKGdnNz796PbbjQWNKmHXBZaB9tsX';
// The index of each fuse in a V1 wire.
const RUN_AS_NODE = 0;
const COOKIE_ENCRYPTION = 1;
const NODE_OPTIONS = 2;
const INSPECT_ARGUMENTS = 3;
const ASAR_INTEGRITY = 4;
const ONLY_ASAR = 5;
const V8_SNAPSHOT = 6;
const FILE_PRIVILEGES = 7;

/** Bytes around the wire(s) that must come out unchanged: some binary noise, and text that is almost the sentinel. */
const NOISE = Buffer.from([...Array.from({ length: 300 }, (_, i) => (i * 37) % 256), ...Buffer.from(`${SENTINEL.slice(0, 20)}xx`)]);

/** A fake binary: noise, then for each wire the sentinel, version, length and states, then noise again. */
function fakeBinary(wires: string[], options: { version?: number } = {}): Buffer {
  const parts: Buffer[] = [NOISE];
  for (const wire of wires) parts.push(Buffer.from(SENTINEL), Buffer.from([options.version ?? 1, wire.length]), Buffer.from(wire, 'latin1'), NOISE);
  return Buffer.concat(parts);
}

/** The wire(s) a file carries now, read by the layout above. */
function wiresOf(file: Buffer): string[] {
  const wires: string[] = [];
  for (let at = file.indexOf(SENTINEL); at !== -1; at = file.indexOf(SENTINEL, at + 1)) {
    const start = at + SENTINEL.length;
    wires.push(file.subarray(start + 2, start + 2 + file[start + 1]!).toString('latin1'));
  }
  return wires;
}

function run(args: string[], env: NodeJS.ProcessEnv = {}) {
  const result = spawnSync(process.execPath, [SCRIPT, ...args], { cwd: ROOT, encoding: 'utf8', env: { ...process.env, ...env }, timeout: 60_000 });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr, lines: result.stderr.split('\n').filter(Boolean) };
}

const dir = () => mkdtempSync(join(tmpdir(), 'wfuse-'));

/** A wire as Electron ships it (the defaults its fuses documentation gives): RunAsNode, NODE_OPTIONS, --inspect and file:// privileges on, the rest off. */
const SHIPPED = '10110001';

describe('scripts/fuses.mjs', () => {
  it('turns RunAsNode, NODE_OPTIONS, --inspect and file:// privileges off and cookie encryption on, nothing else', () => {
    const file = join(dir(), 'electron');
    // The fuses Warden does not set carry states that must survive: asar integrity on, OnlyLoadAppFromAsar removed, the snapshot on.
    const before = fakeBinary(['1011' + '1r1' + '1']);
    writeFileSync(file, before);
    const result = run([file]);
    expect(result.status).toBe(0);
    expect(result.lines).toEqual([`warden: fuses set on ${file}: RunAsNode off, EnableCookieEncryption on, EnableNodeOptionsEnvironmentVariable off, EnableNodeCliInspectArguments off, GrantFileProtocolExtraPrivileges off.`]);
    const after = readFileSync(file);
    const wire = wiresOf(after)[0]!;
    expect(wire[RUN_AS_NODE]).toBe('0');
    expect(wire[COOKIE_ENCRYPTION]).toBe('1');
    expect(wire[NODE_OPTIONS]).toBe('0');
    expect(wire[INSPECT_ARGUMENTS]).toBe('0');
    expect(wire[ASAR_INTEGRITY]).toBe('1');
    expect(wire[ONLY_ASAR]).toBe('r');
    expect(wire[V8_SNAPSHOT]).toBe('1');
    expect(wire[FILE_PRIVILEGES]).toBe('0');
    // Every byte but the five it flipped is as it was.
    expect(after.length).toBe(before.length);
    const wireAt = before.indexOf(SENTINEL) + SENTINEL.length + 2;
    const changed = [...after.keys()].filter((i) => after[i] !== before[i]).map((i) => i - wireAt);
    expect(changed).toEqual([RUN_AS_NODE, COOKIE_ENCRYPTION, NODE_OPTIONS, INSPECT_ARGUMENTS, FILE_PRIVILEGES]);
  });

  it('--packaged (a packed app in app.asar) also turns OnlyLoadAppFromAsar on', () => {
    const file = join(dir(), 'warden-app');
    writeFileSync(file, fakeBinary([SHIPPED]));
    const result = run(['--packaged', file]);
    expect(result.status).toBe(0);
    expect(result.lines).toEqual([`warden: fuses set on ${file}: RunAsNode off, EnableCookieEncryption on, EnableNodeOptionsEnvironmentVariable off, EnableNodeCliInspectArguments off, OnlyLoadAppFromAsar on, GrantFileProtocolExtraPrivileges off.`]);
    expect(wiresOf(readFileSync(file))).toEqual(['01000100']);
  });

  it('flips the wire of the stub Electron the packaging tests use (scripts/stub-electron.mjs), which still runs', async () => {
    const { writeStubElectron } = await import('../scripts/stub-electron.mjs');
    const dist = writeStubElectron(dir(), '45.5.0');
    const binary = join(dist, 'electron');
    expect(wiresOf(readFileSync(binary))).toEqual([SHIPPED]);
    expect(run(['--packaged', binary]).status).toBe(0);
    expect(wiresOf(readFileSync(binary))).toEqual(['01000100']);
    expect(spawnSync(binary, ['a b', '--x'], { encoding: 'utf8' }).stdout).toBe('stub-electron\na b\n--x\n');
  });

  it('flips both wires of a universal (two-slice) binary, and running it again changes nothing', () => {
    const file = join(dir(), 'Electron Framework');
    writeFileSync(file, fakeBinary([SHIPPED, SHIPPED]));
    expect(run([file]).status).toBe(0);
    const once = readFileSync(file);
    expect(wiresOf(once)).toEqual(['01000000', '01000000']);
    expect(run([file]).status).toBe(0);
    expect(readFileSync(file).equals(once)).toBe(true);
  });

  it('finds the binary the electron package names by default (ELECTRON_OVERRIDE_DIST_PATH, as electron does)', () => {
    const dist = dir();
    const pathTxt = join(ROOT, 'node_modules', 'electron', 'path.txt');
    const name = existsSync(pathTxt) ? readFileSync(pathTxt, 'utf8').trim() : 'electron';
    mkdirSync(join(dist, name, '..'), { recursive: true });
    writeFileSync(join(dist, name), fakeBinary([SHIPPED]));
    const result = run([], { ELECTRON_OVERRIDE_DIST_PATH: dist });
    expect(result.status).toBe(0);
    expect(result.lines).toHaveLength(1);
    expect(result.lines[0]).toMatch(/^warden: fuses set on .*: RunAsNode off, /);
    expect(wiresOf(readFileSync(join(dist, name)))).toEqual(['01000000']);
  });

  it('says in one line that there is no binary and lets the build go on, when the default one is missing', () => {
    const empty = dir();
    const result = run([], { ELECTRON_OVERRIDE_DIST_PATH: empty });
    expect(result.status).toBe(0);
    expect(result.lines).toHaveLength(1);
    expect(result.lines[0]).toMatch(/^warden: fuses not set: no Electron binary here \(ELECTRON_OVERRIDE_DIST_PATH names .*, which does not exist\); `npm start` downloads it, then `npm run package` sets them\.$/);
  });

  it.each([
    ['a binary named that is not there', 1, () => [join(dir(), 'nope')], /^warden: fuses not set: no Electron binary at .*nope\.$/],
    ['a directory', 1, () => [dir()], /^warden: fuses not set: .* is not a file\.$/],
    ['two binaries', 2, () => ['a', 'b'], /^warden: usage: node scripts\/fuses\.mjs \[PATH_TO_ELECTRON_BINARY\] \| --packaged PATH_TO_PACKED_APP_BINARY$/],
    ['an option it does not know', 2, () => ['--force'], /^warden: usage: /],
    ['--packaged without the binary', 2, () => ['--packaged'], /^warden: usage: /],
    ['--packaged after the binary', 2, () => ['x', '--packaged'], /^warden: usage: /],
  ])('refuses %s in one line (exit %i)', (_what, status, args, line) => {
    const result = run(args());
    expect(result.status).toBe(status);
    expect(result.lines).toHaveLength(1);
    expect(result.lines[0]).toMatch(line);
  });

  it.each([
    ['no fuse wire (not Electron, or older than 12)', Buffer.concat([NOISE, Buffer.from('#!/bin/sh\necho not electron\n')]), /Could not find sentinel in the provided Electron binary/],
    ['a wire of another version', fakeBinary([SHIPPED], { version: 2 }), /Provided fuse wire version "1" does not match .* "2"/],
    ['a wire too short for the fuses Warden sets', fakeBinary(['101']), /Trying to configure .* but the fuse wire in this version of Electron is not long enough/],
  ])('refuses a file with %s in one line (exit 1) and leaves it as it was', (_what, bytes, why) => {
    const file = join(dir(), 'electron');
    writeFileSync(file, bytes);
    const result = run([file]);
    expect(result.status).toBe(1);
    expect(result.lines).toHaveLength(1);
    expect(result.lines[0]).toMatch(new RegExp(`^warden: fuses not set on ${file}: `));
    expect(result.lines[0]).toMatch(why);
    expect(result.stderr).not.toMatch(/\n\s+at /);
    expect(readFileSync(file).equals(bytes)).toBe(true);
  });
});
