// Settings in <state dir>/settings.json: read at each get (another process may
// have saved), written atomically (temp file, then rename), 0600. A file that
// is missing or unreadable gives the defaults; one that does not validate is
// reported once and ignored, never half used.

import { randomBytes } from 'node:crypto';
import { readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseMemory } from '../supervisor/cgroup';
import { parse, settingsSchema } from '../../shared/schemas';
import { DEFAULT_SETTINGS, type Settings } from '../../shared/settings';

export const SETTINGS_FILE = 'settings.json';

export function settingsFile(stateDir: string, log: (line: string) => void = () => undefined) {
  const path = join(stateDir, SETTINGS_FILE);
  let warned = false;
  return {
    get(): Settings {
      let text: string;
      try {
        text = readFileSync(path, 'utf8');
      } catch {
        return structuredClone(DEFAULT_SETTINGS);
      }
      try {
        return parse(settingsSchema, { ...DEFAULT_SETTINGS, ...(JSON.parse(text) as object) }) as Settings;
      } catch (error) {
        if (!warned) log(`${path} is not valid (${error instanceof Error ? error.message : String(error)}); the defaults are used until Settings are saved.`);
        warned = true;
        return structuredClone(DEFAULT_SETTINGS);
      }
    },
    save(settings: Settings): Settings {
      const checked = parse(settingsSchema, settings) as Settings;
      // The memory default is held to a run's rule too, so a saved default never makes every run fail.
      if (checked.memory !== null) parseMemory(checked.memory, 'memory');
      // A fresh name, created (never followed: 'wx' is O_CREAT|O_EXCL), then renamed over the file.
      const temp = `${path}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
      try {
        writeFileSync(temp, `${JSON.stringify(checked, null, 2)}\n`, { mode: 0o600, flag: 'wx' });
        renameSync(temp, path);
      } catch (error) {
        rmSync(temp, { force: true });
        throw error;
      }
      warned = false;
      return checked;
    },
  };
}
