// The desktop app's updates, with electron-updater (src/main/app/index.ts makes
// its updater and hands it here; nothing here imports Electron, so the flow
// is tested with a real updater against a loopback feed).
//
// The feed is a generic provider: WARDEN_UPDATE_URL at run time, else the
// URL the build wrote into resources/app-update.yml (scripts/package.mjs,
// from WARDEN_UPDATE_URL at build time); with neither, no checks. What an
// update does depends on how the app was installed:
//
// | install  | found by                       | update available                   | then |
// |----------|--------------------------------|------------------------------------|------|
// | AppImage | APPIMAGE (its runtime sets it) | "update available", downloaded     | installed when Warden quits, or on "Restart now" |
// | .deb     | resources/package-type = deb   | "update available" with the command that installs it (apt) | nothing by itself: installing needs root |
// | other    | (a checkout, the dir output)   | no checks                          | |
//
// Never while runs are live: "Restart now" is refused while any run is live
// (it would stop them), and the install at quit happens only once none is
// (the quit path stops this app's runs first, src/main/app/index.ts; an app
// attached to another host installs only when that host has none live).

import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export type PackageKind = 'appimage' | 'deb';

/** How this app was installed; null where it does not update itself (a checkout, an unpacked dir), with why. */
export function packageKind(env: NodeJS.ProcessEnv, resourcesPath: string | undefined, isPackaged: boolean): { kind: PackageKind | null; why: string } {
  if (!isPackaged) return { kind: null, why: 'the app is not packaged (a checkout)' };
  if (env.APPIMAGE) return { kind: 'appimage', why: `the AppImage ${env.APPIMAGE}` };
  let type = '';
  try {
    type = resourcesPath ? readFileSync(join(resourcesPath, 'package-type'), 'utf8').trim() : '';
  } catch {
    // no package-type: not installed from a package
  }
  if (type === 'deb') return { kind: 'deb', why: 'the .deb' };
  return { kind: null, why: type ? `a ${type} package, which Warden does not update` : 'neither an AppImage nor a .deb' };
}

export interface Feed {
  /** The generic provider's base URL. */
  url: string;
  /** WARDEN_UPDATE_URL (given to the updater) or the build's app-update.yml (which the updater reads itself). */
  source: 'env' | 'config';
}

/** An http(s) URL with nothing a shell would read in it (it goes into a command the user pastes). */
function checkUrl(text: string): string | null {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return null;
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return null;
  return /^[A-Za-z0-9._~:/?#[\]@!$&()*+,;=%-]+$/.test(url.href) && !url.href.includes("'") ? url.href : null;
}

/** Where updates come from: WARDEN_UPDATES=0 turns them off; a bad WARDEN_UPDATE_URL is said, not used. */
export function feedFrom(env: NodeJS.ProcessEnv, resourcesPath: string | undefined): { feed: Feed | null; why: string } {
  if (env.WARDEN_UPDATES === '0') return { feed: null, why: 'WARDEN_UPDATES=0' };
  if (env.WARDEN_UPDATE_URL) {
    const url = checkUrl(env.WARDEN_UPDATE_URL);
    return url ? { feed: { url, source: 'env' }, why: 'WARDEN_UPDATE_URL' } : { feed: null, why: `WARDEN_UPDATE_URL is not an http(s) URL: ${JSON.stringify(env.WARDEN_UPDATE_URL.slice(0, 200))}` };
  }
  const config = resourcesPath ? join(resourcesPath, 'app-update.yml') : null;
  if (!config || !existsSync(config)) return { feed: null, why: 'no update URL (built without WARDEN_UPDATE_URL, and none set now)' };
  // electron-builder writes `url: ...` on a line of its own for a generic provider.
  const line = /^url:\s*['"]?([^'"\s]+)['"]?\s*$/m.exec(readFileSync(config, 'utf8'));
  const url = line ? checkUrl(line[1]!) : null;
  return url ? { feed: { url, source: 'config' }, why: 'app-update.yml' } : { feed: null, why: `${config} names no http(s) URL` };
}

/** What of electron-updater's AppUpdater this uses (AppImageUpdater and DebUpdater have it). */
export interface UpdaterLike {
  autoDownload: boolean;
  autoInstallOnAppQuit: boolean;
  /** The app-update.yml it reads (electron-updater: the download cache's name comes from it). */
  updateConfigPath: string | null;
  /** Its own log (null: none); what matters is said through Updates' log, one line each. */
  logger: unknown;
  setFeedURL(options: { provider: 'generic'; url: string }): void;
  checkForUpdates(): Promise<unknown>;
  install(isSilent?: boolean, isForceRunAfter?: boolean): boolean;
  on(event: 'update-available' | 'update-not-available' | 'update-downloaded', listener: (info: UpdateInfoLike) => void): unknown;
  on(event: 'error', listener: (error: Error) => void): unknown;
  /** An AppImage whose name holds its version is installed beside the old one, under the new name. */
  on(event: 'appimage-filename-updated', listener: (path: string) => void): unknown;
}

export interface UpdateInfoLike {
  version: string;
  files: { url: string }[];
}

export type UpdateState = 'idle' | 'checking' | 'available' | 'ready' | 'failed';

export interface UpdateNotice {
  title: string;
  body: string;
  /** The command to copy (the .deb's install), when there is one. */
  command?: string;
}

export interface UpdatesOptions {
  updater: UpdaterLike;
  kind: PackageKind;
  feed: Feed;
  /** The live runs the app sees (its own, or its host's when attached). */
  liveRuns: () => Promise<number>;
  notify: (notice: UpdateNotice) => void;
  log: (line: string) => void;
  /** Where a WARDEN_UPDATE_URL feed's app-update.yml is written (the app's userData dir). */
  configDir: string;
}

/** A word for a POSIX shell, single-quoted. */
const quoted = (text: string) => `'${text.replace(/'/g, `'\\''`)}'`;

/**
 * The command that installs the .deb of `info` from the feed: downloaded to
 * /tmp, then apt (which checks its dependencies). Null when the feed names
 * no .deb, or one whose name or URL is not plain.
 */
export function debCommand(info: UpdateInfoLike, feedUrl: string): string | null {
  const file = info.files.find((f) => f.url.endsWith('.deb'));
  if (!file) return null;
  const url = checkUrl(new URL(file.url, feedUrl.endsWith('/') ? feedUrl : `${feedUrl}/`).href);
  const name = decodeURIComponent(file.url.split('/').pop() ?? '');
  if (!url || !/^[A-Za-z0-9._+~-]+\.deb$/.test(name)) return null;
  return `curl -fL -o /tmp/${name} ${quoted(url)} && sudo apt install /tmp/${name}`;
}

const live = (n: number) => (n === 1 ? 'a run is live' : `${n} runs are live`);

export class Updates {
  state: UpdateState = 'idle';
  /** The update found, once one is. */
  available: UpdateInfoLike | null = null;
  /** "Restart now" was asked: the quit installs, then starts the new AppImage. */
  private restart = false;
  /** Where the installed AppImage is (another name when the new one's holds its version). */
  private installedAt: string | undefined;

  constructor(private readonly options: UpdatesOptions) {
    const { updater, kind, feed } = options;
    // The AppImage is downloaded at once (the user installed a file they own); a .deb needs root: shown, not fetched.
    updater.autoDownload = kind === 'appimage';
    // Installed by installOnQuit, from the app's quit path, once no run is live.
    updater.autoInstallOnAppQuit = false;
    updater.logger = null;
    if (feed.source === 'env') {
      // electron-updater reads app-update.yml for its download cache even with a feed URL set: one of ours, with that URL.
      mkdirSync(options.configDir, { recursive: true, mode: 0o700 });
      const config = join(options.configDir, 'app-update.yml');
      writeFileSync(config, `provider: generic\nurl: ${JSON.stringify(feed.url)}\nupdaterCacheDirName: warden-updater\n`, { mode: 0o600 });
      updater.updateConfigPath = config;
      updater.setFeedURL({ provider: 'generic', url: feed.url });
    }
    updater.on('update-available', (info) => this.onAvailable(info));
    updater.on('update-not-available', () => {
      this.state = 'idle';
    });
    updater.on('update-downloaded', (info) => void this.onDownloaded(info));
    updater.on('appimage-filename-updated', (path) => {
      this.installedAt = path;
    });
    updater.on('error', (error) => {
      this.state = 'failed';
      options.log(`updates: ${error.message.split('\n')[0]} (${feed.url})`);
    });
  }

  /** One check; a failure is one log line (the 'error' event), never a throw into the app. */
  async check(): Promise<void> {
    this.state = 'checking';
    try {
      await this.options.updater.checkForUpdates();
    } catch (error) {
      this.state = 'failed';
      this.options.log(`updates: the check failed: ${error instanceof Error ? error.message.split('\n')[0] : String(error)}`);
    }
  }

  /** What the app says when an update is found (also what a click on it shows again). */
  noticeFor(info: UpdateInfoLike): UpdateNotice {
    if (this.options.kind === 'deb') {
      const command = debCommand(info, this.options.feed.url);
      return command
        ? { title: `Warden ${info.version} is available`, body: `Install it with: ${command}`, command }
        : { title: `Warden ${info.version} is available`, body: `Download its .deb from ${this.options.feed.url} and install it with apt.` };
    }
    return { title: `Warden ${info.version} is available`, body: 'It is downloading, and installs when you quit Warden.' };
  }

  private onAvailable(info: UpdateInfoLike): void {
    this.state = 'available';
    this.available = info;
    this.options.notify(this.noticeFor(info));
  }

  private async onDownloaded(info: UpdateInfoLike): Promise<void> {
    this.state = 'ready';
    this.available = info;
    const runs = await this.options.liveRuns().catch(() => 0);
    const now = runs > 0 ? ` (${live(runs)} now: Warden restarts for it only once none is)` : '';
    this.options.notify({ title: `Warden ${info.version} is ready`, body: `It installs when you quit Warden${now}.` });
  }

  /**
   * "Restart now", unless a run is live (the restart would stop it): null
   * when the caller is to quit now (the quit installs the AppImage and starts
   * the new one: installOnQuit's `relaunch`), else the line to show.
   */
  async restartToUpdate(): Promise<string | null> {
    if (this.options.kind !== 'appimage' || this.state !== 'ready') return 'No update is ready to install.';
    const runs = await this.options.liveRuns();
    if (runs > 0) return `Not now: ${live(runs)}, and restarting would stop ${runs === 1 ? 'it' : 'them'}. The update installs when you quit Warden.`;
    this.restart = true;
    return null;
  }

  /**
   * From the app's quit path, after its host closed: installs a downloaded
   * AppImage when no run is live (`liveRuns`: what is still live then, e.g.
   * the runs of the host an attached app leaves running). `relaunch`: the
   * AppImage to start once this app has exited, after "Restart now" (the
   * app's own relaunch, so the new one never meets this one's instance lock).
   */
  installOnQuit(liveRuns: number): { installed: boolean; relaunch: string | null } {
    if (this.options.kind !== 'appimage' || this.state !== 'ready') return { installed: false, relaunch: null };
    if (liveRuns > 0) {
      this.options.log(`updates: Warden ${this.available?.version} not installed at quit: ${live(liveRuns)}.`);
      return { installed: false, relaunch: null };
    }
    const installed = this.options.updater.install(true, false);
    if (installed) this.options.log(`updates: installed Warden ${this.available?.version}.`);
    return { installed, relaunch: installed && this.restart ? (this.installedAt ?? process.env.APPIMAGE ?? null) : null };
  }
}

/** The first check waits for the window and the host; then one every six hours. */
export const FIRST_CHECK_MS = 10_000;
export const CHECK_EVERY_MS = 6 * 60 * 60 * 1000;

export interface SetUpOptions extends Omit<UpdatesOptions, 'updater' | 'kind' | 'feed' | 'configDir'> {
  env: NodeJS.ProcessEnv;
  /** UpdatesOptions.configDir, asked only when updates are on. */
  configDir: () => string;
  resourcesPath: string | undefined;
  isPackaged: boolean;
  /** electron-updater's updater for this install (index.ts: its autoUpdater), loaded only when updates are on. */
  loadUpdater: () => Promise<UpdaterLike>;
  firstCheckMs?: number;
  everyMs?: number;
}

/**
 * Updates for this install, checking now-ish and then every few hours; null
 * (and one log line saying why) where there are none. The timers never keep
 * the app alive; `stop` ends them.
 */
export async function setUpUpdates(options: SetUpOptions): Promise<{ updates: Updates; stop: () => void } | null> {
  const { kind, why: kindWhy } = packageKind(options.env, options.resourcesPath, options.isPackaged);
  if (kind === null) {
    options.log(`updates: off: ${kindWhy}.`);
    return null;
  }
  const { feed, why } = feedFrom(options.env, options.resourcesPath);
  if (feed === null) {
    options.log(`updates: off: ${why}.`);
    return null;
  }
  const updates = new Updates({ updater: await options.loadUpdater(), kind, feed, liveRuns: options.liveRuns, notify: options.notify, log: options.log, configDir: options.configDir() });
  options.log(`updates: ${kind === 'appimage' ? 'downloaded and installed at quit' : 'announced with the apt command'}, from ${feed.url} (${why}).`);
  const first = setTimeout(() => void updates.check(), options.firstCheckMs ?? FIRST_CHECK_MS);
  const every = setInterval(() => void updates.check(), options.everyMs ?? CHECK_EVERY_MS);
  first.unref();
  every.unref();
  return {
    updates,
    stop: () => {
      clearTimeout(first);
      clearInterval(every);
    },
  };
}
