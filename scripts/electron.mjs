// `npm start`: makes sure Electron's binary is present, then runs electron-vite.
// Install scripts are off in .npmrc (Electron's download would fail a whole
// install without internet), so the binary is fetched here, when first needed.

import { spawn, spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

const require = createRequire(import.meta.url);

function electronBinary() {
  try {
    return require('electron'); // the binary's path; throws until it is downloaded
  } catch {
    return undefined;
  }
}

if (electronBinary() === undefined) {
  console.error('warden: downloading the Electron binary (first start only)...');
  const env = { ...process.env };
  delete env.ELECTRON_SKIP_BINARY_DOWNLOAD;
  const installer = join(dirname(require.resolve('electron/package.json')), 'install.js');
  const result = spawnSync(process.execPath, [installer], { env, encoding: 'utf8' });
  if (result.status !== 0 || electronBinary() === undefined) {
    const reason = (result.stderr || '').trim().split('\n')[0] || `exit status ${result.status}`;
    console.error(`warden: the Electron binary could not be downloaded (${reason}). npm start needs it; the engine and the CLI work without it (npx warden run -- COMMAND).`);
    process.exit(1);
  }
}

const cli = join(dirname(require.resolve('electron-vite/package.json')), 'bin', 'electron-vite.js');
const child = spawn(process.execPath, [cli, ...process.argv.slice(2)], { stdio: 'inherit' });
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => child.kill(signal));
