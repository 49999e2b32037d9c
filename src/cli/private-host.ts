// A host inside this process, on a temporary state dir of its own, for a
// client whose state dir cannot hold one (read-only, or not writable by
// this user): `warden mcp` then supervises its runs itself, as `warden run`
// does in that case, instead of running nothing. No history is written; the
// temporary dir (its socket, its lock's key) is removed when this process
// exits. Loaded only then.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startHost } from '../main/host/host';

export interface PrivateHost {
  socketPath: string;
  stateDir: string;
}

export async function startPrivateHost(version: string, log: (line: string) => void): Promise<PrivateHost> {
  // mkdtemp makes it 0700: the socket in it is this user's alone.
  const stateDir = mkdtempSync(join(tmpdir(), 'warden-private-'));
  const host = await startHost({ stateDir, port: null, webRoot: null, history: false, version, log });
  process.once('exit', () => rmSync(stateDir, { recursive: true, force: true }));
  return { socketPath: host.socketPath, stateDir };
}
