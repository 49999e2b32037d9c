// The end-to-end harness: a `warden serve` host on a fresh state dir, a page of
// Debian's Chromium (the Playwright Test runner's browser, launched with
// playwright.config.ts's executablePath) logged in to its web UI, the `warden`
// CLI against the same host, screenshots in both color schemes, and a
// screenshot of the page attached to each test that fails (the runner keeps its trace).
//
// Never assert durations here: everything polls (waitFor and friends) with
// generous timeouts, so a loaded 2-core machine is slow, never red.

import { execFile, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser, BrowserContext, Locator, Page, TestInfo } from '@playwright/test';
import { chromium } from 'playwright-core';

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
export const CHROMIUM = process.env.WARDEN_E2E_CHROMIUM ?? '/usr/bin/chromium';
export const RESULTS_DIR = join(ROOT, 'test-results');
const WARDEN_BIN = join(ROOT, 'bin', 'warden.mjs');
export const CHROMIUM_ARGS = ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'];

/** Timeouts for the suite (polls, not expectations of speed). */
export const WAIT_MS = 30_000;
/** For describe(..., { timeout }) in the browser specs. */
export const SPEC_TIMEOUT_MS = 120_000;
export const SETUP_TIMEOUT_MS = 180_000;

/** Why the browser specs cannot run here, or null when they can. Printed once per file by the caller. */
export function chromiumMissing(): string | null {
  if (!existsSync(CHROMIUM)) return `no Chromium at ${CHROMIUM} (install Debian's chromium or set WARDEN_E2E_CHROMIUM)`;
  return null;
}

/** Skip reason for a browser spec file, printed so the run shows it. */
export function skipReason(spec: string): string | null {
  const reason = chromiumMissing();
  if (reason) console.log(`e2e/${spec}: skipped: ${reason}`);
  return reason;
}

// ---------------------------------------------------------------- polling

/**
 * Polls `probe` until it returns something other than undefined/null/false, or
 * throws after `timeoutMs` naming `what` and the last value or error seen.
 */
export async function waitFor<T>(what: string, probe: () => Promise<T | undefined | null | false> | T | undefined | null | false, timeoutMs = WAIT_MS, intervalMs = 100): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown = undefined;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined && value !== null && value !== false) return value;
      last = value;
    } catch (error) {
      last = error instanceof Error ? error.message.split('\n')[0] : error;
    }
    if (Date.now() > deadline) throw new Error(`Timed out after ${timeoutMs} ms waiting for ${what} (last: ${JSON.stringify(last)})`);
    await sleep(intervalMs);
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** A test id selector; extra attribute filters as [name=value] pairs. */
export function tid(id: string, attrs: Record<string, string> = {}): string {
  return `[data-testid="${id}"]` + Object.entries(attrs).map(([k, v]) => `[${k}="${v}"]`).join('');
}

/** Waits for the locator's first match to be visible; returns it. */
export async function visible(locator: Locator, timeoutMs = WAIT_MS): Promise<Locator> {
  const first = locator.first();
  await first.waitFor({ state: 'visible', timeout: timeoutMs });
  return first;
}

/** Waits until the attribute of the first match satisfies `ok` (or equals it); returns the value. */
export async function waitForAttr(locator: Locator, name: string, ok: string | ((value: string | null) => boolean), timeoutMs = WAIT_MS): Promise<string | null> {
  const test = typeof ok === 'string' ? (v: string | null) => v === ok : ok;
  let seen: string | null = null;
  await waitFor(
    `${locator} [${name}] ${typeof ok === 'string' ? `= ${ok}` : 'to match'}`,
    async () => {
      seen = await locator.first().getAttribute(name, { timeout: 1000 });
      return test(seen) ? { seen } : false;
    },
    timeoutMs,
  );
  return seen;
}

/** Waits until the first match's rendered text contains `text` (a string, case-insensitive, or a RegExp); returns the text. */
export async function waitForText(locator: Locator, text: string | RegExp, timeoutMs = WAIT_MS): Promise<string> {
  const test = typeof text === 'string' ? (t: string) => t.toLowerCase().includes(text.toLowerCase()) : (t: string) => text.test(t);
  return waitFor(
    `${locator} to contain ${String(text)}`,
    async () => {
      // innerText: as laid out, so separate blocks stay separate words.
      const t = await locator.first().innerText({ timeout: 1000 });
      return test(t) ? t : false;
    },
    timeoutMs,
  );
}

/** The run id in a #/runs/ID/... hash, once the page shows one. */
export async function waitForRunRoute(page: Page, timeoutMs = WAIT_MS): Promise<{ id: string; tab: string }> {
  return waitFor(
    'the page to route to a run (#/runs/ID/TAB)',
    async () => {
      const hash = await page.evaluate(() => window.location.hash);
      const m = /^#\/runs\/([0-9a-f]{6,32})(?:\/(\w+))?/.exec(hash);
      return m ? { id: m[1]!, tab: m[2] ?? 'output' } : false;
    },
    timeoutMs,
  );
}

/** Routes the page (hash only, no reload: the store and its event stream stay). */
export async function route(page: Page, hash: string): Promise<void> {
  await page.evaluate((h) => {
    window.location.hash = h;
  }, hash);
}

/** Sets a control that is a <select>, a radio group or a segmented set of buttons to `value`. */
export async function choose(control: Locator, value: string): Promise<void> {
  const el = control.first();
  const tag = await el.evaluate((node) => node.tagName);
  if (tag === 'SELECT') {
    await el.selectOption(value);
    return;
  }
  if (tag === 'INPUT') {
    await el.check();
    return;
  }
  const option = el.locator(`input[value="${value}"], [data-value="${value}"], button[value="${value}"]`);
  if ((await option.count()) > 0) {
    const first = option.first();
    if ((await first.evaluate((n) => n.tagName)) === 'INPUT') await first.check();
    else await first.click();
    return;
  }
  await el.getByText(new RegExp(`^\\s*${value}\\s*$`, 'i')).first().click();
}

// ---------------------------------------------------------------- the build

function newestMtime(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) newest = Math.max(newest, newestMtime(path));
    else if (entry.isFile()) newest = Math.max(newest, statSync(path).mtimeMs);
  }
  return newest;
}

function buildIsStale(): boolean {
  const index = join(ROOT, 'out', 'renderer', 'index.html');
  if (!existsSync(index) || !existsSync(join(ROOT, 'out', 'main', 'index.js'))) return true;
  const built = statSync(index).mtimeMs;
  return newestMtime(join(ROOT, 'src', 'renderer')) > built || newestMtime(join(ROOT, 'src', 'shared')) > built;
}

/**
 * Builds out/ (electron-vite) when out/renderer/index.html is missing or older
 * than any file under src/renderer or src/shared. Spec files run in parallel
 * workers: a lock directory makes one of them build while the others wait.
 */
export async function ensureBuilt(): Promise<void> {
  mkdirSync(join(ROOT, 'out'), { recursive: true });
  const lock = join(ROOT, 'out', '.e2e-build.lock');
  await waitFor(
    'the e2e build lock',
    () => {
      try {
        mkdirSync(lock);
        return true;
      } catch {
        // Held by another worker; a lock left by a killed run goes stale after 3 minutes.
        try {
          if (Date.now() - statSync(lock).mtimeMs > 180_000) rmSync(lock, { recursive: true, force: true });
        } catch {
          // Gone meanwhile.
        }
        return false;
      }
    },
    SETUP_TIMEOUT_MS,
    250,
  );
  try {
    if (!buildIsStale()) return; // fresh, or another worker built it
    const result = spawnSync(process.execPath, [join(ROOT, 'node_modules', 'electron-vite', 'bin', 'electron-vite.js'), 'build'], { cwd: ROOT, encoding: 'utf8' });
    if (result.status !== 0) throw new Error(`electron-vite build failed (exit ${result.status}):\n${result.stdout}\n${result.stderr}`);
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

// ---------------------------------------------------------------- the host

interface HostProcess {
  child: ChildProcess;
  url: string;
  loginUrl: string;
  exited: Promise<void>;
  log: string[];
}

function startHostProcess(stateDir: string, port = 0): Promise<HostProcess> {
  const child = spawn(process.execPath, [WARDEN_BIN, 'serve', '--port', String(port), '--open'], {
    cwd: ROOT,
    env: { ...process.env, WARDEN_STATE_DIR: stateDir },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const log: string[] = [];
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return new Promise((resolve, reject) => {
    let url: string | null = null;
    let loginUrl: string | null = null;
    let out = '';
    let err = '';
    const timer = setTimeout(() => fail(new Error('warden serve did not print its URLs in time')), 60_000);
    const fail = (error: Error) => {
      clearTimeout(timer);
      child.kill('SIGKILL');
      reject(new Error(`${error.message}\n--- warden serve stderr:\n${err}\n--- stdout:\n${out}`));
    };
    const check = () => {
      if (url && loginUrl) {
        clearTimeout(timer);
        resolve({ child, url, loginUrl, exited, log });
      }
    };
    child.stdout!.setEncoding('utf8').on('data', (text: string) => {
      out += text;
      log.push(text);
      const m = /^(http:\/\/127\.0\.0\.1:\d+\/login\?token=\S+)$/m.exec(out);
      if (m && !loginUrl) loginUrl = m[1]!;
      check();
    });
    child.stderr!.setEncoding('utf8').on('data', (text: string) => {
      err += text;
      log.push(text);
      const m = /API and web UI on (http:\/\/127\.0\.0\.1:\d+)/.exec(err);
      if (m && !url) url = m[1]!;
      check();
    });
    child.once('exit', (code, signal) => {
      if (!url || !loginUrl) fail(new Error(`warden serve exited (${code ?? signal}) before it printed its URLs`));
    });
  });
}

async function stopHostProcess(host: HostProcess): Promise<void> {
  if (host.child.exitCode !== null || host.child.signalCode !== null) return;
  host.child.kill('SIGTERM');
  const gone = await Promise.race([host.exited.then(() => true), sleep(30_000).then(() => false)]);
  if (!gone) {
    host.child.kill('SIGKILL');
    await host.exited;
  }
}

// ---------------------------------------------------------------- the harness

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** The fields of a `--json` result the specs read. */
export interface RunJson {
  id: string;
  state: string;
  verdict?: string;
  stdout: string;
  limitMs: number | null;
}

export interface Harness {
  readonly spec: string;
  readonly stateDir: string;
  readonly browser: Browser;
  readonly page: Page;
  /** The host's base URL (changes with restartHost). */
  url(): string;
  /** `node bin/warden.mjs ARGS` on this state dir (through the host while it runs). */
  cli(args: string[], options?: { timeoutMs?: number }): Promise<CliResult>;
  /** `warden run ... --json` style: the parsed stdout as `json` (throws with stderr when it is not JSON). */
  cliJson<T = RunJson>(args: string[], options?: { timeoutMs?: number }): Promise<CliResult & { json: T }>;
  /** SIGTERM the host, wait for it to exit, start it again on the same state dir, log the page in again. */
  restartHost(): Promise<void>;
  /** Kills the host with `signal` (SIGKILL: no chance to say goodbye) and waits for it to be gone; the page is left as it is. */
  killHost(signal?: NodeJS.Signals): Promise<void>;
  /** Starts a host again on the same state dir and the same port (so the open page can reach it), without touching the page; its one-time login URL. */
  startHostAgain(): Promise<string>;
  /** Opens `url` in another page of the page's browser context (same cookies), waits for it to settle, closes it. */
  visitInAnotherPage(url: string): Promise<void>;
  /** test-results/<spec>-<name>-<light|dark>.png of the page in both color schemes. */
  screenshot(page: Page, name: string): Promise<string[]>;
  /** Errors the page threw (uncaught) since the start: shown when a spec fails. */
  pageErrors: string[];
  /** After each test (test.afterEach): a failed one gets the page's trace and a screenshot attached. */
  onTestEnd(testInfo: TestInfo): Promise<void>;
  close(): Promise<void>;
}

/** The Runs layout a harness's page starts with: the list most specs read (run-row), or the screen's own default (the monitor at 1280 px). */
export type StartLayout = 'list' | 'auto';

/** `browser`: the runner's (Playwright Test); without one, Chromium is launched here and closed with the harness. */
export async function startHarness(spec: string, given?: Browser, options: { layout?: StartLayout } = {}): Promise<Harness> {
  await ensureBuilt();
  // Short: the control socket (<dir>/run/warden.sock) must fit in 108 bytes.
  const stateDir = mkdtempSync('/tmp/we-');
  let host: HostProcess;
  try {
    host = await startHostProcess(stateDir);
  } catch (error) {
    rmSync(stateDir, { recursive: true, force: true });
    throw error;
  }
  let browser: Browser | undefined = given;
  let context: BrowserContext | undefined;
  // A setup that fails (no UI, a broken build) leaves no host, browser or state dir behind.
  const abandon = async (error: unknown): Promise<never> => {
    await stopHostProcess(host).catch(() => undefined);
    await context?.close().catch(() => undefined);
    if (!given) await browser?.close().catch(() => undefined);
    rmSync(stateDir, { recursive: true, force: true });
    throw error;
  };
  let page: Page;
  try {
    browser ??= (await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS })) as unknown as Browser;
    context = await browser.newContext({ viewport: { width: 1280, height: 860 }, colorScheme: 'light' });
    // Runs shows the monitor by default at this width; the specs of the list choose the list, as a reader can.
    if ((options.layout ?? 'list') === 'list') await context.addInitScript(() => localStorage.getItem('warden.runsLayout') ?? localStorage.setItem('warden.runsLayout', 'list'));
    // Playwright Test traces this context itself (trace: 'retain-on-failure' in playwright.config.ts).
    page = await context.newPage();
  } catch (error) {
    return abandon(error);
  }
  const pageErrors: string[] = [];
  page.on('pageerror', (error) => pageErrors.push(error.message));
  page.on('console', (message) => {
    if (message.type() === 'error') pageErrors.push(`console: ${message.text()}`);
  });

  const login = async () => {
    await page.goto(host.loginUrl);
    await waitFor('the page to land on the web UI after login', async () => (await page.evaluate(() => window.location.pathname)) === '/');
    try {
      await visible(page.locator(tid('nav-runs')));
    } catch (error) {
      const body = await page.evaluate(() => document.body.innerText.slice(0, 500)).catch(() => '?');
      throw new Error(`The web UI did not show its navigation after login: ${(error as Error).message.split('\n')[0]}\npage text: ${JSON.stringify(body)}\npage errors: ${pageErrors.join(' | ') || 'none'}`);
    }
  };
  await login().catch(abandon);

  const run = (args: string[], options: { timeoutMs?: number } = {}): Promise<CliResult> =>
    new Promise((resolve) => {
      execFile(
        process.execPath,
        [WARDEN_BIN, ...args],
        { cwd: ROOT, env: { ...process.env, WARDEN_STATE_DIR: stateDir }, timeout: options.timeoutMs ?? 90_000, maxBuffer: 64 * 1024 * 1024 },
        (error, stdout, stderr) => {
          const code = error && typeof (error as { code?: unknown }).code === 'number' ? ((error as { code: number }).code) : error ? -1 : 0;
          resolve({ code, stdout: String(stdout), stderr: String(stderr) });
        },
      );
    });

  const harness: Harness = {
    spec,
    stateDir,
    browser: browser!,
    page,
    pageErrors,
    url: () => host.url,
    cli: run,
    async cliJson<T>(args: string[], options?: { timeoutMs?: number }) {
      const result = await run(args, options);
      let json: T;
      try {
        json = JSON.parse(result.stdout) as T;
      } catch {
        throw new Error(`warden ${args.join(' ')} did not print JSON (exit ${result.code}):\n${result.stderr}\n${result.stdout}`);
      }
      return { ...result, json };
    },
    async restartHost() {
      const before = pageErrors.length;
      await stopHostProcess(host);
      host = await startHostProcess(stateDir);
      await login();
      // The old page losing its host (event stream, fetches) is expected here, not an error of the UI.
      const during = pageErrors.splice(before).filter((e) => !/ERR_CONNECTION_REFUSED|ERR_CONNECTION_RESET|ERR_EMPTY_RESPONSE/.test(e));
      pageErrors.push(...during);
    },
    async killHost(signal: NodeJS.Signals = 'SIGKILL') {
      if (host.child.exitCode === null && host.child.signalCode === null) host.child.kill(signal);
      await host.exited;
    },
    async startHostAgain() {
      const port = Number(new URL(host.url).port);
      // The port was just freed; a moment for the kernel to let it go is polled for, not assumed.
      host = await waitFor('a host on the same port again', () => startHostProcess(stateDir, port).catch(() => false), 60_000, 500);
      return host.loginUrl;
    },
    async visitInAnotherPage(url: string) {
      const other = await page.context().newPage();
      try {
        await other.goto(url);
        await other.waitForLoadState('load');
      } finally {
        await other.close();
      }
    },
    async screenshot(target: Page, name: string) {
      mkdirSync(RESULTS_DIR, { recursive: true });
      const paths: string[] = [];
      const safe = name.replace(/[^A-Za-z0-9_.-]+/g, '-');
      for (const colorScheme of ['light', 'dark'] as const) {
        await target.emulateMedia({ colorScheme });
        // Two frames: the media change restyles, then paints.
        await target.evaluate(() => new Promise<void>((r) => requestAnimationFrame(() => requestAnimationFrame(() => r()))));
        const path = join(RESULTS_DIR, `${spec}-${safe}-${colorScheme}.png`);
        await target.screenshot({ path, fullPage: true });
        paths.push(path);
      }
      await target.emulateMedia({ colorScheme: 'light' });
      return paths;
    },
    async onTestEnd(testInfo: TestInfo) {
      if (testInfo.status === testInfo.expectedStatus) return;
      try {
        await testInfo.attach('page', { body: await page.screenshot({ fullPage: true }), contentType: 'image/png' });
        if (pageErrors.length > 0) await testInfo.attach('page errors', { body: pageErrors.join('\n'), contentType: 'text/plain' });
      } catch {
        // A page gone (the browser closed) has nothing more to show.
      }
    },
    async close() {
      if (pageErrors.length > 0) console.log(`e2e/${spec}: errors in the page:\n  ${pageErrors.join('\n  ')}`);
      await stopHostProcess(host).catch(() => undefined);
      await context!.close().catch(() => undefined);
      if (!given) await browser!.close().catch(() => undefined);
      rmSync(stateDir, { recursive: true, force: true });
    },
  };
  return harness;
}

/** A random tag for commands, so a search finds this run alone. */
export function tag(prefix: string): string {
  return `${prefix}-${Math.random().toString(36).slice(2, 10)}`;
}

/**
 * The size a figure says ("64 MiB", "64.0 MiB", "4.77 MiB", "512 B") in bytes,
 * rounded to what it shows: a column writes one decimal, a sentence drops
 * trailing zeros, and both say the same figure.
 */
export function sizeOf(text: string): number {
  const m = /(-?[\d.]+)\s*(B|KiB|MiB|GiB|TiB)\b/.exec(text);
  if (!m) throw new Error(`No size in ${JSON.stringify(text)}`);
  return Number(m[1]) * 1024 ** ['B', 'KiB', 'MiB', 'GiB', 'TiB'].indexOf(m[2]!);
}

/** Whether two figures say the same size, each as precise as it is written (one decimal of its unit at least). */
export function sameSize(a: string, b: string): boolean {
  const [x, y] = [sizeOf(a), sizeOf(b)];
  const unit = 1024 ** Math.floor(Math.log(Math.max(x, y, 1)) / Math.log(1024));
  return Math.abs(x - y) <= unit * 0.05 + 1e-9;
}
