// electron-builder's afterPack hook (electron-builder.yml): the fuses of the
// packed app's binary, set by scripts/fuses.mjs --packaged before any target
// (AppImage, deb) is made from the directory. A fuse that cannot be set
// fails the build: an app shipped without them would run any script as Node.

import { execFileSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export default async function afterPack(context) {
  if (context.electronPlatformName !== 'linux') return;
  const binary = join(context.appOutDir, context.packager.executableName);
  execFileSync(process.execPath, [join(dirname(fileURLToPath(import.meta.url)), 'fuses.mjs'), '--packaged', binary], { stdio: 'inherit' });
}
