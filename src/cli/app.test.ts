// `warden app`: where the desktop app is looked for, in order (real files in
// temp dirs); the app started on its own (its own session) when there is a
// display; and, with no app or no display, one line and the web UI's login
// link from `warden serve --open`. The packed app started from the .deb's
// /usr/bin/warden is in test/package.test.ts.

import { execa } from 'execa';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DEB_APP, findDesktopApp, noDisplay } from './app';
import { stopBackgroundHosts, WARDEN_BIN } from './testkit';

const dir = mkdtempSync(join(tmpdir(), 'wapp-'));
const stateDirs: string[] = [];
afterAll(async () => {
  await stopBackgroundHosts(stateDirs);
  rmSync(dir, { recursive: true, force: true });
}, 60_000);

let n = 0;
/** An executable file at `path` (a shell script), or a plain one with `mode`. */
function file(path: string, mode = 0o755, text = '#!/bin/sh\nexit 0\n'): string {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, text);
  chmodSync(path, mode);
  return path;
}
const fresh = () => join(dir, `case-${++n}`);

describe('findDesktopApp', () => {
  it('takes each place in order, and says what it looked at when there is none', () => {
    const root = fresh();
    const home = join(root, 'home');
    const packed = join(root, 'opt', 'resources', 'app.asar.unpacked');
    mkdirSync(packed, { recursive: true });
    const deb = join(root, 'deb', 'warden-app');
    const pathDir = join(root, 'path');
    const checkout = join(root, 'checkout');
    const lookup = (env: NodeJS.ProcessEnv, packageRoot: string | null) => {
      const tried: string[] = [];
      const app = findDesktopApp({ env, packageRoot, home, debApp: deb }, tried);
      return { app, tried };
    };

    // Nothing anywhere.
    expect(lookup({ PATH: pathDir }, packed)).toEqual({
      app: null,
      tried: [join(root, 'opt', 'warden-app'), deb, 'warden-app on PATH', '~/Applications/Warden*.AppImage', 'an Electron beside this warden'],
    });
    // An Electron beside a checkout, once it has its binary and a built app.
    file(join(checkout, 'node_modules', 'electron', 'dist', 'electron'));
    writeFileSync(join(checkout, 'node_modules', 'electron', 'path.txt'), 'electron');
    expect(lookup({}, checkout).app).toBeNull();
    file(join(checkout, 'out', 'main', 'index.js'), 0o644);
    expect(lookup({}, checkout).app).toEqual({ from: 'the Electron beside this warden', argv: [join(checkout, 'node_modules', 'electron', 'dist', 'electron'), checkout] });
    // An AppImage in ~/Applications or ~/.local/bin beats it: the newest, executable, named Warden*.AppImage.
    file(join(home, 'Applications', 'Other.AppImage'));
    file(join(home, 'Applications', 'Warden-0.0.9.AppImage'), 0o644);
    const older = file(join(home, 'Applications', 'Warden-0.1.0.AppImage'));
    const newer = file(join(home, '.local', 'bin', 'Warden-0.2.0-x86_64.AppImage'));
    utimesSync(older, 1000, 1000);
    expect(lookup({}, checkout).app).toEqual({ from: newer, argv: [newer] });
    // warden-app on PATH beats the AppImage; the .deb's beats PATH; the package's own beats the .deb's.
    const onPath = file(join(pathDir, 'warden-app'));
    expect(lookup({ PATH: `/nonexistent:${pathDir}` }, checkout).app).toEqual({ from: 'PATH', argv: [onPath] });
    file(deb);
    expect(lookup({ PATH: pathDir }, checkout).app).toEqual({ from: deb, argv: [deb] });
    const own = file(join(root, 'opt', 'warden-app'));
    expect(lookup({ PATH: pathDir }, packed).app).toEqual({ from: 'this package', argv: [own] });
    // WARDEN_APP beats all; one that is not an executable file is said and passed over.
    const chosen = file(join(root, 'chosen'));
    expect(lookup({ WARDEN_APP: chosen, PATH: pathDir }, packed).app).toEqual({ from: 'WARDEN_APP', argv: [chosen] });
    const notExecutable = file(join(root, 'plain'), 0o644);
    const passed = lookup({ WARDEN_APP: notExecutable }, packed);
    expect(passed.app).toEqual({ from: 'this package', argv: [own] });
    expect(passed.tried).toEqual([`WARDEN_APP (${notExecutable} is not an executable file)`]);
    // A directory is not an app.
    expect(lookup({ WARDEN_APP: root }, null).tried[0]).toMatch(/is not an executable file/);
  });

  it('noDisplay: X or Wayland on Linux; elsewhere always a display', () => {
    expect(noDisplay({ DISPLAY: ':0' }, 'linux')).toBeNull();
    expect(noDisplay({ WAYLAND_DISPLAY: 'wayland-0' }, 'linux')).toBeNull();
    expect(noDisplay({ DISPLAY: '' }, 'linux')).toBe('there is no display here (DISPLAY and WAYLAND_DISPLAY are unset)');
    expect(noDisplay({}, 'darwin')).toBeNull();
  });
});

/** `warden app ...` as a user runs it, with only what is given in its environment. */
function app(args: string[], env: Record<string, string>) {
  const stateDir = fresh();
  stateDirs.push(stateDir);
  return execa(process.execPath, [WARDEN_BIN, 'app', ...args], { reject: false, env: { PATH: `${dirname(process.execPath)}:/usr/bin:/bin`, HOME: fresh(), WARDEN_STATE_DIR: stateDir, ...env }, extendEnv: false, stdin: 'ignore', all: true, timeout: 60_000 });
}

/** Until `done` holds, or a generous deadline. */
async function until(done: () => boolean): Promise<void> {
  for (let i = 0; i < 600 && !done(); i++) await new Promise((r) => setTimeout(r, 50));
}

describe('warden app', () => {
  it('starts the app in a session of its own and returns', async () => {
    const log = join(fresh(), 'started');
    mkdirSync(dirname(log), { recursive: true });
    // The stub app: its argv, its pid and its session id (field 6 of /proc/self/stat).
    const stub = file(join(fresh(), 'warden-app'), 0o755, `#!/bin/sh\nset -- $(cat /proc/$$/stat)\necho "pid=$1 sid=$6 display=$DISPLAY" > ${log}\n`);
    const done = await app([], { WARDEN_APP: stub, DISPLAY: ':99' });
    expect(done.exitCode, done.all).toBe(0);
    expect(done.stderr.split('\n').at(-1)).toBe(`warden: opening the Warden app (${stub})`);
    await until(() => existsSync(log) && readFileSync(log, 'utf8').includes('\n'));
    const [pid, sid, display] = /^pid=(\d+) sid=(\d+) display=(.*)$/.exec(readFileSync(log, 'utf8').trim())!.slice(1);
    expect(sid).toBe(pid);
    expect(display).toBe(':99');
  }, 60_000);

  it('with no app installed: one line, then the web UI\'s login link', async (context) => {
    if (existsSync(DEB_APP)) return context.skip(`${DEB_APP} is installed on this machine, so warden app would open it`);
    const child = app(['--port', '0'], { DISPLAY: ':99' });
    let seen = '';
    child.all!.on('data', (chunk: Buffer) => void (seen += chunk.toString()));
    await until(() => /http:\/\/127\.0\.0\.1:\d+\//.test(seen) || child.exitCode !== null);
    expect(seen).toMatch(/^warden: no Warden desktop app is installed \(looked at .*warden-app on PATH, ~\/Applications\/Warden\*\.AppImage, an Electron beside this warden\); opening the web UI instead \(warden serve --open\)\.\n/);
    expect(seen).toMatch(/http:\/\/127\.0\.0\.1:\d+\//);
    child.kill('SIGTERM');
    expect((await child).exitCode).toBe(0);
  }, 60_000);

  it('with the app but no display: one line naming both, then the web UI; the app is not started', async () => {
    const log = join(fresh(), 'started');
    const stub = file(join(fresh(), 'warden-app'), 0o755, `#!/bin/sh\ntouch ${log}\n`);
    const child = app(['--port', '0'], { WARDEN_APP: stub });
    let seen = '';
    child.all!.on('data', (chunk: Buffer) => void (seen += chunk.toString()));
    await until(() => /http:\/\/127\.0\.0\.1:\d+\//.test(seen) || child.exitCode !== null);
    expect(seen.split('\n')[0]).toBe(`warden: the Warden app is installed (${stub}), but there is no display here (DISPLAY and WAYLAND_DISPLAY are unset); opening the web UI instead (warden serve --open).`);
    child.kill('SIGTERM');
    await child;
    expect(existsSync(log)).toBe(false);
  }, 60_000);

  it('--web opens the web UI even with the app there; bad words are one line', async () => {
    const log = join(fresh(), 'started');
    const stub = file(join(fresh(), 'warden-app'), 0o755, `#!/bin/sh\ntouch ${log}\n`);
    const child = app(['--web', '--port', '0'], { WARDEN_APP: stub, DISPLAY: ':99' });
    let seen = '';
    child.all!.on('data', (chunk: Buffer) => void (seen += chunk.toString()));
    await until(() => /http:\/\/127\.0\.0\.1:\d+\//.test(seen) || child.exitCode !== null);
    expect(seen).toMatch(/http:\/\/127\.0\.0\.1:\d+\//);
    child.kill('SIGTERM');
    await child;
    expect(existsSync(log)).toBe(false);
    const bad = await app(['now'], {});
    expect(bad.exitCode).toBe(125);
    expect(bad.stderr).toBe('warden: warden app takes no words ("now"); see warden app --help.');
  }, 60_000);
});
