// Who holds the loopback TCP listener's half-open connections (those without
// a whole request head yet), so that no one peer can fill it and lock the
// owner out. Each is counted against its peer address and, once more than a
// few are pending at all, against the local user who opened it (another than
// the host's own): loopback offers a whole 127.0.0.0/8 of addresses to
// spread over, but one uid. The
// uid comes from /proc/net/tcp (the client's end of the connection is a
// socket of this same network namespace, listed with its owner's uid).
//
// Reading that table costs time in proportion to the machine's sockets, so
// it is read again only after COST_FACTOR times its last read (at least
// MIN_REFRESH_MS): /proc reading stays a small share of the host's time under
// a flood of thousands. A connection newer than the table read last is not in
// it yet: it is counted against one shared "not yet known" user, so a burst
// inside one refresh gets one user's share, not one per address; the next
// read places each under its user and ends those past that user's share.

import { readFileSync } from 'node:fs';
import type { Socket } from 'node:net';

/** Pending connections in all past which the uid of each new one is looked up. */
const PRESSURE = 16;
/** The table is read again no sooner than this, and no sooner than COST_FACTOR times its last read took. */
const MIN_REFRESH_MS = 2;
const COST_FACTOR = 20;
/** The key of connections too new for the table read last. */
const NOT_YET_KNOWN = 'uid ?';

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

/** One pending connection and the keys it is counted under. */
interface Entry {
  socket: Socket;
  peer: string;
  keys: string[];
}

export class PendingByPeer {
  private readonly counts = new Map<string, number>();
  private total = 0;
  private owners: Map<string, number> | null = null;
  private ownersAt = 0;
  private lastReadMs = 0;
  /** Connections not counted under a user yet (NOT_YET_KNOWN, or admitted before any pressure), placed at the next read of the table. */
  private readonly unplaced = new Set<Entry>();

  /**
   * The host's own user is bounded per address only: it can stop the host
   * outright anyway, and its browser's pages and its own tools share its uid
   * with the owner, whom a share per user would lock out.
   */
  private readonly self = typeof process.getuid === 'function' ? process.getuid() : null;

  constructor(private readonly perPeer: number) {}

  /** Counts the connection in; null (and nothing counted) when its peer already has its share pending. Call the returned release once its head arrived or it closed. */
  admit(socket: Socket): (() => void) | null {
    const entry: Entry = { socket, peer: `${socket.remoteAddress}:${socket.remotePort}`, keys: [`addr ${socket.remoteAddress ?? 'unknown'}`] };
    if (this.total >= PRESSURE) {
      let uid = this.uidOf(entry.peer, false);
      // Unknown ones fill their shared share only until the table is read again, which places them (and may end some).
      if (uid === undefined && this.full(NOT_YET_KNOWN)) uid = this.uidOf(entry.peer, true);
      if (uid === undefined) entry.keys.push(NOT_YET_KNOWN);
      else if (uid !== null && uid !== this.self) entry.keys.push(`uid ${uid}`);
    }
    if (entry.keys.some((key) => this.full(key))) return null;
    for (const key of entry.keys) this.add(key, 1);
    // Those admitted before any pressure are placed under their user at the first read, too.
    if (this.total < PRESSURE || entry.keys.includes(NOT_YET_KNOWN)) this.unplaced.add(entry);
    this.total += 1;
    let counted = true;
    return () => {
      if (!counted) return;
      counted = false;
      this.total -= 1;
      this.unplaced.delete(entry);
      for (const key of entry.keys) this.add(key, -1);
    };
  }

  private full(key: string): boolean {
    return (this.counts.get(key) ?? 0) >= this.perPeer;
  }

  private add(key: string, n: number): void {
    const count = (this.counts.get(key) ?? 0) + n;
    if (count > 0) this.counts.set(key, count);
    else this.counts.delete(key);
  }

  /**
   * The peer's uid; null when the table cannot tell (no /proc, another
   * namespace); undefined when the peer is newer than the table and it is too
   * soon to read it again (`force` reads it anyway).
   */
  private uidOf(peer: string, force: boolean): number | null | undefined {
    const now = performance.now();
    const due = force || this.owners === null || now - this.ownersAt >= Math.max(MIN_REFRESH_MS, this.lastReadMs * COST_FACTOR);
    if (!due) {
      const uid = this.owners?.get(peer);
      return uid === undefined ? (this.owners === null ? null : undefined) : uid;
    }
    this.owners = readOwners();
    this.ownersAt = performance.now();
    this.lastReadMs = this.ownersAt - now;
    this.place();
    return this.owners?.get(peer) ?? null;
  }

  /** Each connection counted as not yet known goes under its user now; one past that user's share is ended. */
  private place(): void {
    for (const entry of [...this.unplaced]) {
      this.unplaced.delete(entry);
      if (entry.keys.includes(NOT_YET_KNOWN)) {
        entry.keys = entry.keys.filter((key) => key !== NOT_YET_KNOWN);
        this.add(NOT_YET_KNOWN, -1);
      }
      const uid = this.owners?.get(entry.peer);
      // Closed meanwhile, or not in this namespace, or the host's own user: counted by address alone.
      if (uid === undefined || uid === this.self) continue;
      const key = `uid ${uid}`;
      if (this.full(key)) {
        entry.socket.destroy(); // its close releases the address it is still counted under
        continue;
      }
      entry.keys.push(key);
      this.add(key, 1);
    }
  }
}
