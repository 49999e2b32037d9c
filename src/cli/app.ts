// `warden app`: the desktop app, from wherever this CLI was installed. The
// app is looked for where a user's install puts it (WARDEN_APP, the package
// this CLI came in, the .deb's /opt/Warden, warden-app on PATH, an AppImage
// in ~/Applications, an Electron beside a checkout or npm install); it is
// started on its own (its own session, no stdio of ours) and `warden app`
// returns. Where there is none, or no display to show it on, one line says
// so and the web UI opens instead (`warden serve --open`), which needs only
// a browser.

import { spawn } from 'node:child_process';
import { accessSync, constants, existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import type { CliIo } from './io';
import { tokensOf, UsageError } from './parse';

/** The .deb's install directory (scripts/deb.mjs). */
export const DEB_APP = '/opt/Warden/warden-app';
/** The packed app's binary name (electron-builder.yml linux.executableName). */
export const APP_BINARY = 'warden-app';

export interface DesktopApp {
  /** Where it was found, for the line that says what opens. */
  from: string;
  argv: string[];
}

export interface Lookup {
  env: NodeJS.ProcessEnv;
  /** The directory holding this CLI's bin/warden.mjs (src/client/package-root.ts); null when unknown. */
  packageRoot: string | null;
  home: string;
  debApp?: string;
}

function executable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

/** An Electron binary the package's node_modules has (a checkout after `npm start` fetched it), as electron's own index.js finds it. */
function electronBeside(root: string): string | null {
  const pathTxt = join(root, 'node_modules', 'electron', 'path.txt');
  if (!existsSync(pathTxt) || !existsSync(join(root, 'out', 'main', 'index.js'))) return null;
  const binary = join(root, 'node_modules', 'electron', 'dist', readFileSync(pathTxt, 'utf8').trim());
  return executable(binary) ? binary : null;
}

/** The newest Warden AppImage in ~/Applications (AppImageLauncher's place) or ~/.local/bin. */
function appImage(home: string): string | null {
  const found: { path: string; mtimeMs: number }[] = [];
  for (const dir of [join(home, 'Applications'), join(home, '.local', 'bin')]) {
    let names: string[];
    try {
      names = readdirSync(dir);
    } catch {
      continue;
    }
    for (const name of names) {
      const path = join(dir, name);
      if (/^Warden.*\.AppImage$/i.test(name) && executable(path)) found.push({ path, mtimeMs: statSync(path).mtimeMs });
    }
  }
  return found.sort((a, b) => b.mtimeMs - a.mtimeMs)[0]?.path ?? null;
}

/**
 * The desktop app to open, in the order a user's choice and install go:
 * WARDEN_APP; the packed app this CLI belongs to (its bin/warden.mjs is in
 * resources/app.asar.unpacked, the app two levels up); the .deb's; warden-app
 * on PATH; an AppImage; an Electron beside this CLI's package. Null: none.
 * `tried` collects what was looked at, for the line when none is found.
 */
export function findDesktopApp(lookup: Lookup, tried: string[] = []): DesktopApp | null {
  const { env, packageRoot, home } = lookup;
  const given = env.WARDEN_APP;
  if (given) {
    if (executable(given)) return { from: 'WARDEN_APP', argv: [given] };
    tried.push(`WARDEN_APP (${given} is not an executable file)`);
  }
  if (packageRoot && basename(packageRoot) === 'app.asar.unpacked') {
    const packed = join(dirname(dirname(packageRoot)), APP_BINARY);
    if (executable(packed)) return { from: 'this package', argv: [packed] };
    tried.push(packed);
  }
  const deb = lookup.debApp ?? DEB_APP;
  if (executable(deb)) return { from: deb, argv: [deb] };
  tried.push(deb);
  for (const dir of (env.PATH ?? '').split(':')) {
    if (dir && executable(join(dir, APP_BINARY))) return { from: 'PATH', argv: [join(dir, APP_BINARY)] };
  }
  tried.push(`${APP_BINARY} on PATH`);
  const image = appImage(home);
  if (image) return { from: image, argv: [image] };
  tried.push('~/Applications/Warden*.AppImage');
  const electron = packageRoot ? electronBeside(packageRoot) : null;
  if (electron) return { from: 'the Electron beside this warden', argv: [electron, packageRoot!] };
  tried.push('an Electron beside this warden');
  return null;
}

/** Why the desktop app cannot show here (no display); null when it can. */
export function noDisplay(env: NodeJS.ProcessEnv, platform: NodeJS.Platform = process.platform): string | null {
  if (platform !== 'linux') return null;
  if (env.DISPLAY || env.WAYLAND_DISPLAY) return null;
  return 'there is no display here (DISPLAY and WAYLAND_DISPLAY are unset)';
}

/** Starts the app in its own session with no stdio of ours; resolves once it runs, rejects when it cannot start. */
function launch(app: DesktopApp): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(app.argv[0]!, app.argv.slice(1), { detached: true, stdio: 'ignore' });
    child.once('error', reject);
    child.once('spawn', () => {
      child.unref();
      resolve();
    });
  });
}

/** `warden app` (its help: APP_HELP in help.ts). */
export async function appCommand(args: string[], io: CliIo, packageRoot: string | null, serveWeb: (args: string[]) => Promise<number>): Promise<number> {
  let web = false;
  const port: string[] = [];
  for (const token of tokensOf(args, { web: { type: 'boolean' }, port: { type: 'string' } }, 'app')) {
    if (token.kind === 'positional') throw new UsageError(`warden app takes no words (${JSON.stringify(token.value)}); see warden app --help.`);
    if (token.kind === 'option' && token.name === 'web') web = true;
    if (token.kind === 'option' && token.name === 'port') port.push('--port', token.value ?? '');
  }
  if (web) return serveWeb(['--open', ...port]);
  const tried: string[] = [];
  const app = findDesktopApp({ env: process.env, packageRoot, home: homedir() }, tried);
  const display = noDisplay(process.env);
  if (app && display === null) {
    try {
      await launch(app);
      io.err(`warden: opening the Warden app (${app.argv[0]})\n`);
      return 0;
    } catch (error) {
      io.err(`warden: the Warden app at ${app.argv[0]} did not start (${(error as NodeJS.ErrnoException).code ?? String(error)}); opening the web UI instead (warden serve --open).\n`);
      return serveWeb(['--open', ...port]);
    }
  }
  const why = app ? `the Warden app is installed (${app.argv[0]}), but ${display}` : `no Warden desktop app is installed (looked at ${tried.join(', ')})`;
  io.err(`warden: ${why}; opening the web UI instead (warden serve --open).\n`);
  return serveWeb(['--open', ...port]);
}
