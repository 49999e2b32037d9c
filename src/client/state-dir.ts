// Where Warden keeps its state (docs/architecture.md, "Persistence"):
// $WARDEN_STATE_DIR when set, else $XDG_STATE_HOME/warden, else
// ~/.local/state/warden on Linux and the platform's app-data dir elsewhere.
// The app, `warden serve`, the CLI and the MCP server all resolve it here, so they share it.

import { homedir } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';

export interface StateDirEnv {
  WARDEN_STATE_DIR?: string;
  XDG_STATE_HOME?: string;
  LOCALAPPDATA?: string;
  APPDATA?: string;
}

export function resolveStateDir(
  env: StateDirEnv = process.env,
  platform: NodeJS.Platform = process.platform,
  home: string = homedir(),
): string {
  if (env.WARDEN_STATE_DIR) return resolve(env.WARDEN_STATE_DIR);
  // The XDG spec ignores a relative value.
  if (env.XDG_STATE_HOME && isAbsolute(env.XDG_STATE_HOME)) return join(env.XDG_STATE_HOME, 'warden');
  if (platform === 'darwin') return join(home, 'Library', 'Application Support', 'warden');
  if (platform === 'win32') return join(env.LOCALAPPDATA ?? env.APPDATA ?? join(home, 'AppData', 'Local'), 'warden');
  return join(home, '.local', 'state', 'warden');
}
