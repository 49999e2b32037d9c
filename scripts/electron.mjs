// `npm start`: makes sure Electron's binary is present, then runs electron-vite.
// Electron (45 and later) has no install script that downloads it (see .npmrc),
// so npm install works without internet and the binary is fetched here, when
// first needed.
// Where it cannot be had (no internet), one line says so and the same UI is
// served in web mode (`warden serve --open`, which prints the login link).

import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { electronBinary } from './electron-binary.mjs';

const require = createRequire(import.meta.url);
const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const cli = join(dirname(require.resolve('electron-vite/package.json')), 'bin', 'electron-vite.js');

function newest(dir) {
  let n = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    n = Math.max(n, entry.isDirectory() ? newest(path) : statSync(path).mtimeMs);
  }
  return n;
}

/** The page `warden serve` serves is out/renderer: built unless it is newer than its sources. */
function buildIfStale() {
  const index = join(ROOT, 'out', 'renderer', 'index.html');
  const sources = Math.max(newest(join(ROOT, 'src', 'renderer')), newest(join(ROOT, 'src', 'shared')));
  if (existsSync(index) && statSync(index).mtimeMs > sources) return 0;
  return spawnSync(process.execPath, [cli, 'build'], { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'] }).status ?? 1;
}

/** No Electron here: the same renderer in a browser, from `warden serve`, which prints its login link. */
function serveWebMode(reason) {
  console.error(`warden: no Electron binary (${reason}): serving the same UI in web mode instead; open the login link below in a browser.`);
  const built = buildIfStale();
  if (built !== 0) process.exit(built);
  // WARDEN_PORT picks the port (0: any free one); else warden serve's default, 7373.
  const port = process.env.WARDEN_PORT ? ['--port', process.env.WARDEN_PORT] : [];
  const serve = spawn(process.execPath, [join(ROOT, 'bin', 'warden.mjs'), 'serve', '--open', ...port], { cwd: ROOT, stdio: 'inherit' });
  serve.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
  for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => serve.kill(signal));
}

let missing = null;
if (electronBinary().missing !== undefined) {
  console.error('warden: downloading the Electron binary (first start only)...');
  const env = { ...process.env };
  const installer = join(dirname(require.resolve('electron/package.json')), 'install.js');
  const result = spawnSync(process.execPath, [installer], { env, encoding: 'utf8' });
  if (result.status !== 0 || electronBinary().missing !== undefined) {
    missing = (result.stderr || '').trim().split('\n')[0] || `exit status ${result.status}`;
  }
}

if (missing !== null) {
  // `npm run preview` asks for the built app in Electron: without Electron, web mode is the one way to show it.
  serveWebMode(`it could not be downloaded: ${missing}`);
} else {
  const child = spawn(process.execPath, [cli, ...process.argv.slice(2)], { stdio: 'inherit' });
  child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
  for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => child.kill(signal));
}
