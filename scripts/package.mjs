// `npm run package:dir | package:deb | package:appimage`: the desktop app's
// release builds with electron-builder (electron-builder.yml; docs/packaging.md).
// It builds out/ first (the app, the CLI bundle the package's /usr/bin/warden
// runs, the icons), then:
//
//   dir       dist/linux-unpacked: the packed app (asar, fuses set)
//   deb       dist/warden_VERSION_ARCH.deb: electron-builder's deb where its fpm can be
//             had (fpm on PATH, CUSTOM_FPM_PATH, or its cache), else the dir output
//             assembled with Debian's dpkg-deb (scripts/deb.mjs), the same layout
//   appimage  dist/Warden-VERSION-ARCH.AppImage (its tools come from GitHub or a seeded cache)
//
// What the machine must give, said in one line when it is not there:
// Electron's binary (WARDEN_ELECTRON_DIST: an unpacked Electron distribution
// on disk; else node_modules/electron's, or electron-builder downloads it,
// which needs a network or its cache), and for the AppImage electron-builder's
// AppImage tools. WARDEN_UPDATE_URL makes the app check that URL for updates
// (a generic provider: resources/app-update.yml, dist/latest-linux.yml).
//
//   node scripts/package.mjs dir|deb|appimage [--no-build]

import { spawnSync } from 'node:child_process';
import { lookup } from 'node:dns/promises';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { homedir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { electronBinary } from './electron-binary.mjs';
import { writeIcons } from './icons.mjs';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(import.meta.url);
const TARGETS = { dir: 'dir', deb: 'deb', appimage: 'AppImage' };
/** electron-builder.yml's toolsets.appimage, and the archive electron-builder fetches for it. */
const APPIMAGE_TOOLSET = { release: 'appimage@1.0.3', archive: 'appimage-tools-runtime-20251108.tar.gz' };
const FPM_TOOLSET = { release: 'fpm@2.1.4', archive: 'fpm-1.17.0-ruby-3.4.3-linux-amd64.7z' };

/** Says why in one line and exits 1: what is missing and where it comes from. */
function fail(line) {
  console.error(`warden: ${line}`);
  process.exit(1);
}

function step(file, args, options = {}) {
  const result = spawnSync(file, args, { cwd: ROOT, stdio: 'inherit', ...options });
  if (result.status !== 0) fail(`${relative(ROOT, args[0] ?? file) || file} ${args.slice(1).join(' ')} failed (exit ${result.status ?? result.signal}).`);
}

/** electron-builder's cache (ELECTRON_BUILDER_CACHE, else XDG_CACHE_HOME or ~/.cache), as it finds it. */
function builderCache() {
  const env = process.env.ELECTRON_BUILDER_CACHE?.trim();
  if (env) return env;
  const xdg = process.env.XDG_CACHE_HOME;
  return join(xdg || join(homedir(), '.cache'), 'electron-builder');
}

const cached = (toolset) => existsSync(join(builderCache(), toolset.release, toolset.archive)) || existsSync(join(builderCache(), toolset.release, toolset.archive.replace(/\.(tar\.gz|7z)$/, '')));

/** Whether github.com resolves: electron-builder downloads Electron and its tools from there. */
async function network() {
  try {
    await Promise.race([lookup('github.com'), new Promise((_, reject) => setTimeout(() => reject(new Error('timeout')), 5000))]);
    return true;
  } catch {
    return false;
  }
}

function onPath(name) {
  return (process.env.PATH ?? '').split(':').some((dir) => dir && existsSync(join(dir, name)));
}

/** A zip of this Electron in @electron/get's cache (~/.cache/electron, or ELECTRON_CACHE). */
function electronZipCached(version) {
  const cache = process.env.ELECTRON_CACHE || join(process.env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'electron');
  const name = `electron-v${version}-linux-${process.arch}.zip`;
  if (!existsSync(cache)) return false;
  return existsSync(join(cache, name)) || readdirSync(cache).some((entry) => existsSync(join(cache, entry, name)));
}

/** electron-builder's options for Electron: a distribution on disk, or null (it downloads, or takes its cache). */
async function electronOptions() {
  const version = JSON.parse(readFileSync(require.resolve('electron/package.json'), 'utf8')).version;
  const given = process.env.WARDEN_ELECTRON_DIST;
  if (given) {
    if (!existsSync(join(given, 'electron')) || !statSync(given).isDirectory()) fail(`WARDEN_ELECTRON_DIST names ${given}, which holds no unpacked Electron (no electron binary in it).`);
    return [`-c.electronDist=${given}`];
  }
  const found = electronBinary();
  if (found.path) return [`-c.electronDist=${dirname(found.path)}`];
  if (electronZipCached(version) || (await network())) return [];
  fail(`packaging needs Electron ${version}'s binary for linux-${process.arch}, and there is none here: no network to download it, none in the cache (~/.cache/electron). Set WARDEN_ELECTRON_DIST to an unpacked Electron (docs/packaging.md).`);
}

/** Whether electron-builder can get fpm for its deb target here. */
function fpmAvailable() {
  if (process.env.CUSTOM_FPM_PATH) return {};
  if (process.env.USE_SYSTEM_FPM === 'true' || onPath('fpm')) return onPath('fpm') ? { USE_SYSTEM_FPM: 'true' } : null;
  return cached(FPM_TOOLSET) ? {} : null;
}

async function main() {
  const [target, ...flags] = process.argv.slice(2);
  if (!Object.hasOwn(TARGETS, target ?? '') || flags.some((f) => f !== '--no-build')) {
    console.error('usage: node scripts/package.mjs dir|deb|appimage [--no-build]');
    process.exit(2);
  }
  if (target === 'appimage' && !process.env.APPIMAGE_TOOLS_PATH && !cached(APPIMAGE_TOOLSET) && !(await network())) {
    fail(`package:appimage needs electron-builder's AppImage tools (${APPIMAGE_TOOLSET.release}), which come from GitHub: run it with a network, or seed the cache with ${APPIMAGE_TOOLSET.archive} in ${join(builderCache(), APPIMAGE_TOOLSET.release)} (or set APPIMAGE_TOOLS_PATH); docs/packaging.md.`);
  }
  const electron = await electronOptions();
  if (!flags.includes('--no-build')) {
    const vite = join(dirname(require.resolve('electron-vite/package.json')), 'bin', 'electron-vite.js');
    step(process.execPath, [vite, 'build']);
    step(process.execPath, [join(ROOT, 'scripts', 'build-cli.mjs'), '--dist']);
    writeIcons(join(ROOT, 'out', 'icons'));
  }
  const update = process.env.WARDEN_UPDATE_URL ? ['-c.publish.provider=generic', `-c.publish.url=${process.env.WARDEN_UPDATE_URL}`] : [];
  const builder = join(dirname(require.resolve('electron-builder/package.json')), 'cli.js');
  const build = (name, env = {}) => step(process.execPath, [builder, '--linux', name, '--publish', 'never', ...electron, ...update], { env: { ...process.env, ...env } });
  if (target !== 'deb') {
    build(TARGETS[target]);
    return;
  }
  const fpm = fpmAvailable();
  if (fpm) {
    build('deb', fpm);
    return;
  }
  console.error("warden: no fpm for electron-builder's deb target here (it needs a network or a seeded cache): assembling the .deb from dist/linux-unpacked with dpkg-deb.");
  build('dir');
  const { buildDeb } = await import('./deb.mjs');
  try {
    const out = await buildDeb(join(ROOT, 'dist'));
    console.error(`warden: built ${relative(ROOT, out)} with dpkg-deb`);
  } catch (error) {
    fail(`the .deb was not built: ${error instanceof Error ? error.message.split('\n')[0] : String(error)}`);
  }
}

await main();
