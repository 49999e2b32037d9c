// The .deb of the desktop app, assembled with Debian's own dpkg-deb from
// electron-builder's `dir` output (dist/linux-unpacked), where electron-builder's
// deb target cannot run: it needs fpm, which it downloads from GitHub
// (scripts/package.mjs decides). The layout is the one electron-builder's deb
// has, plus the CLI:
//
//   /opt/Warden/                      the app (warden-app, resources/app.asar, ...)
//   /usr/bin/warden-app               -> the app
//   /usr/bin/warden                   -> /opt/Warden/bin/warden, the CLI's launcher (build/linux/warden):
//                                        Node 20.19+ from PATH runs resources/app.asar.unpacked/bin/warden.mjs
//                                        (Recommends nodejs)
//   /usr/share/applications/warden.desktop
//   /usr/share/icons/hicolor/NxN/apps/warden.png, scalable/apps/warden.svg
//   /usr/share/doc/warden/copyright
//
// resources/package-type says "deb", as electron-builder's own deb does: the
// app's updater reads it (src/main/app/updates.ts). The maintainer scripts make
// chrome-sandbox setuid only where unprivileged user namespaces do not work
// (as electron-builder's do) and refresh the desktop and icon caches; they
// honour DPKG_ROOT, so `dpkg --root DIR --force-script-chrootless` installs
// into a throwaway root. Usage:
//
//   node scripts/deb.mjs [DIST]     (default dist: reads DIST/linux-unpacked, writes DIST/warden_VERSION_ARCH.deb)

import { execFileSync } from 'node:child_process';
import { chmodSync, cpSync, createReadStream, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ICON_SIZES, png, svg } from './icons.mjs';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');

export const PACKAGE_NAME = 'warden';
export const INSTALL_DIR = '/opt/Warden';
export const APP_BINARY = 'warden-app';
/** What Electron needs of the system (electron-builder's own deb depends on the same). */
export const DEPENDS = ['libgtk-3-0', 'libnotify4', 'libnss3', 'libxss1', 'libxtst6', 'xdg-utils', 'libatspi2.0-0', 'libuuid1', 'libsecret-1-0'];
/** The CLI runs on the system's Node; Python sessions need python3. The app itself needs neither. */
export const RECOMMENDS = ['nodejs (>= 20.19)', 'python3'];

/** Debian's architecture name for Node's. */
export function debArch(arch = process.arch) {
  const names = { x64: 'amd64', arm64: 'arm64', ia32: 'i386', arm: 'armhf' };
  if (!(arch in names)) throw new Error(`no Debian architecture for ${arch}`);
  return names[arch];
}

/** The control file's text. Installed-Size is in KiB, as dpkg counts it. */
export function controlText({ version, arch, installedKiB, description }) {
  const [summary, ...rest] = description.split('\n');
  return [
    `Package: ${PACKAGE_NAME}`,
    `Version: ${version}`,
    `Architecture: ${arch}`,
    "Maintainer: Warden's authors <warden@users.noreply.github.com>",
    `Installed-Size: ${installedKiB}`,
    `Depends: ${DEPENDS.join(', ')}`,
    `Recommends: ${RECOMMENDS.join(', ')}`,
    'Section: devel',
    'Priority: optional',
    `Description: ${summary}`,
    ...rest.map((line) => ` ${line === '' ? '.' : line}`),
    '',
  ].join('\n');
}

/** The desktop entry (desktop-file-validate checks it in the tests). */
export function desktopEntry() {
  return [
    '[Desktop Entry]',
    'Type=Application',
    'Name=Warden',
    'GenericName=Script supervisor',
    'Comment=Supervise the scripts AI agents run',
    `Exec=${INSTALL_DIR}/${APP_BINARY} %U`,
    'Icon=warden',
    'Terminal=false',
    'Categories=Development;',
    'Keywords=agents;supervisor;mcp;process;timeout;',
    'StartupWMClass=Warden',
    '',
  ].join('\n');
}

const POSTINST = `#!/bin/sh
# Warden's .deb (scripts/deb.mjs). DPKG_ROOT is set when dpkg installs into another root.
set -e
sandbox="\${DPKG_ROOT:-}${INSTALL_DIR}/chrome-sandbox"
# Chromium's sandbox needs unprivileged user namespaces; where they do not work, its helper must be setuid root.
if [ -L /proc/self/ns/user ] && unshare --user true 2>/dev/null; then
  chmod 0755 "$sandbox"
else
  chmod 4755 "$sandbox"
fi
if command -v update-desktop-database >/dev/null 2>&1; then update-desktop-database -q "\${DPKG_ROOT:-}/usr/share/applications" || true; fi
if command -v gtk-update-icon-cache >/dev/null 2>&1; then gtk-update-icon-cache -q -t -f "\${DPKG_ROOT:-}/usr/share/icons/hicolor" || true; fi
exit 0
`;

const POSTRM = `#!/bin/sh
# Warden's .deb (scripts/deb.mjs).
set -e
if command -v update-desktop-database >/dev/null 2>&1; then update-desktop-database -q "\${DPKG_ROOT:-}/usr/share/applications" || true; fi
exit 0
`;

function sizeKiB(dir) {
  let bytes = 0;
  const walk = (path) => {
    for (const entry of readdirSync(path, { withFileTypes: true })) {
      const full = join(path, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.isFile()) bytes += statSync(full).size;
    }
  };
  walk(dir);
  return Math.ceil(bytes / 1024);
}

async function sha512(path) {
  const hash = createHash('sha512');
  for await (const chunk of createReadStream(path)) hash.update(chunk);
  return hash.digest('base64');
}

/**
 * Builds DIST/warden_VERSION_ARCH.deb from DIST/linux-unpacked; returns its path.
 * Also adds the .deb to DIST/latest-linux.yml (the update feed electron-updater
 * reads), beside the AppImage's entry when there is one.
 */
export async function buildDeb(dist = join(ROOT, 'dist')) {
  const unpacked = join(dist, 'linux-unpacked');
  if (!existsSync(join(unpacked, APP_BINARY))) throw new Error(`no packed app in ${unpacked} (npm run package:dir makes it)`);
  const pkg = JSON.parse(readFileSync(join(unpacked, 'resources', 'app.asar.unpacked', 'package.json'), 'utf8'));
  const arch = debArch();
  const staging = join(dist, '.deb-root');
  rmSync(staging, { recursive: true, force: true });
  const opt = join(staging, INSTALL_DIR);
  mkdirSync(dirname(opt), { recursive: true });
  cpSync(unpacked, opt, { recursive: true, verbatimSymlinks: true });
  writeFileSync(join(opt, 'resources', 'package-type'), 'deb');
  const bin = join(staging, 'usr', 'bin');
  mkdirSync(bin, { recursive: true });
  // Relative links, so they also resolve inside a root that is not / (dpkg --root, a chroot).
  symlinkSync(relative(bin, join(opt, APP_BINARY)), join(bin, APP_BINARY));
  if (!existsSync(join(opt, 'bin', 'warden'))) throw new Error(`no CLI launcher in ${unpacked}/bin (electron-builder.yml's extraFiles puts it there)`);
  symlinkSync(relative(bin, join(opt, 'bin', 'warden')), join(bin, 'warden'));
  const applications = join(staging, 'usr', 'share', 'applications');
  mkdirSync(applications, { recursive: true });
  writeFileSync(join(applications, 'warden.desktop'), desktopEntry());
  for (const size of ICON_SIZES) {
    const dir = join(staging, 'usr', 'share', 'icons', 'hicolor', `${size}x${size}`, 'apps');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'warden.png'), png(size));
  }
  const scalable = join(staging, 'usr', 'share', 'icons', 'hicolor', 'scalable', 'apps');
  mkdirSync(scalable, { recursive: true });
  writeFileSync(join(scalable, 'warden.svg'), svg());
  const doc = join(staging, 'usr', 'share', 'doc', PACKAGE_NAME);
  mkdirSync(doc, { recursive: true });
  writeFileSync(join(doc, 'copyright'), `Warden ${pkg.version}\n\nElectron's license and Chromium's are in ${INSTALL_DIR}/LICENSE.electron.txt and ${INSTALL_DIR}/LICENSES.chromium.html.\n`);
  const control = join(staging, 'DEBIAN');
  mkdirSync(control, { recursive: true });
  const description = `${pkg.description}\nWarden is a desktop app and a command line (warden): run commands and Python\nscripts with time limits that keep their output, honest verdicts, and the\nprocesses they leave behind ended. Its MCP server and shell hook put agents'\nscripts under it. The CLI needs Node.js 20.19 or later.`;
  writeFileSync(join(control, 'control'), controlText({ version: pkg.version, arch, installedKiB: sizeKiB(staging), description }));
  for (const [name, text] of [['postinst', POSTINST], ['postrm', POSTRM]]) {
    writeFileSync(join(control, name), text);
    chmodSync(join(control, name), 0o755);
  }
  const out = join(dist, `${PACKAGE_NAME}_${pkg.version}_${arch}.deb`);
  // --root-owner-group: every file root's in the package, without fakeroot.
  execFileSync('dpkg-deb', ['--root-owner-group', '-Zxz', '--build', staging, out], { stdio: ['ignore', 'ignore', 'inherit'] });
  rmSync(staging, { recursive: true, force: true });
  await addToUpdateFeed(dist, out, pkg.version);
  return out;
}

/** Adds (or replaces) the .deb's entry in DIST/latest-linux.yml. */
async function addToUpdateFeed(dist, deb, version) {
  const { parse, stringify } = await import('yaml');
  const feed = join(dist, 'latest-linux.yml');
  const info = existsSync(feed) ? parse(readFileSync(feed, 'utf8')) : null;
  const entry = { url: deb.split('/').pop(), sha512: await sha512(deb), size: statSync(deb).size };
  const same = info && info.version === version;
  const files = [...(same ? info.files.filter((f) => !f.url.endsWith('.deb')) : []), entry];
  writeFileSync(feed, stringify({ version, files, ...(same ? { path: info.path, sha512: info.sha512 } : { path: entry.url, sha512: entry.sha512 }), releaseDate: new Date().toISOString() }));
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  try {
    const out = await buildDeb(process.argv[2]);
    console.error(`warden: built ${relative(process.cwd(), out) || out} with dpkg-deb`);
  } catch (error) {
    console.error(`warden: the .deb was not built: ${error instanceof Error ? error.message.split('\n')[0] : String(error)}`);
    process.exit(1);
  }
}
