// Who holds the loopback TCP listener's half-open connections (those without
// a whole request head yet), so that no one peer can fill it and lock the
// owner out. Each is counted against its peer address and, once more than a
// few are pending at all, against the local user who opened it: loopback
// offers a whole 127.0.0.0/8 of addresses to spread over, but one uid. The
// uid comes from /proc/net/tcp (the client's end of the connection is a
// socket of this same network namespace, listed with its owner's uid), read
// at most every TABLE_REFRESH_MS and only under that pressure.

import { readFileSync } from 'node:fs';
import type { Socket } from 'node:net';

/** Pending connections in all past which the uid of each new one is looked up. */
const PRESSURE = 16;
const TABLE_REFRESH_MS = 200;

/** "0100007F:1F90" (as /proc/net/tcp writes 127.0.0.1:8080) to "127.0.0.1:8080". */
function endpointOf(hex: string): string | null {
  const [addr, port] = hex.split(':');
  if (!addr || !port || addr.length !== 8) return null;
  const bytes = [6, 4, 2, 0].map((i) => parseInt(addr.slice(i, i + 2), 16));
  return `${bytes.join('.')}:${parseInt(port, 16)}`;
}

/** TCP sockets of this network namespace by local address:port, with their owner's uid. */
function readOwners(path = '/proc/net/tcp'): Map<string, number> | null {
  let table: string;
  try {
    table = readFileSync(path, 'utf8');
  } catch {
    return null;
  }
  const owners = new Map<string, number>();
  for (const line of table.split('\n').slice(1)) {
    const fields = line.trim().split(/\s+/);
    if (fields.length < 8) continue;
    const local = endpointOf(fields[1]!);
    if (local !== null) owners.set(local, Number(fields[7]));
  }
  return owners;
}

export class PendingByPeer {
  private readonly counts = new Map<string, number>();
  private total = 0;
  private owners: Map<string, number> | null = null;
  private ownersAt = 0;

  constructor(private readonly perPeer: number) {}

  /** Counts the connection in; false (and nothing counted) when its peer already has its share pending. Call the returned release once its head arrived or it closed. */
  admit(socket: Socket): (() => void) | null {
    const keys = [`addr ${socket.remoteAddress ?? 'unknown'}`];
    if (this.total >= PRESSURE) {
      const uid = this.uidOf(`${socket.remoteAddress}:${socket.remotePort}`);
      if (uid !== null) keys.push(`uid ${uid}`);
    }
    if (keys.some((key) => (this.counts.get(key) ?? 0) >= this.perPeer)) return null;
    for (const key of keys) this.counts.set(key, (this.counts.get(key) ?? 0) + 1);
    this.total += 1;
    let counted = true;
    return () => {
      if (!counted) return;
      counted = false;
      this.total -= 1;
      for (const key of keys) {
        const left = (this.counts.get(key) ?? 1) - 1;
        if (left > 0) this.counts.set(key, left);
        else this.counts.delete(key);
      }
    };
  }

  private uidOf(peer: string): number | null {
    const now = performance.now();
    if (this.owners === null || (!this.owners.has(peer) && now - this.ownersAt >= TABLE_REFRESH_MS)) {
      this.owners = readOwners();
      this.ownersAt = now;
    }
    return this.owners?.get(peer) ?? null;
  }
}
