// What the port finder reads of /proc: the listening sockets of this network
// namespace (net/tcp and net/tcp6) and the socket inodes a process holds
// (its fd directory's links, socket:[INODE]). Reading a process's
// descriptors costs a readdir and a readlink per descriptor, so the finder
// asks only when it must (finder.ts).

import { closeSync, openSync, readdirSync, readFileSync, readlinkSync, readSync } from 'node:fs';
import { endianness } from 'node:os';
import { parseListening, type ListenEntry } from './proc-net';

export interface SocketTable {
  /** Every listening TCP socket now; null when the tables cannot be read (no /proc). */
  listening(): ListenEntry[] | null;
  /** The socket inodes a process holds; null when it is gone or not ours to read. */
  socketInodes(pid: number): number[] | null;
  /**
   * The kernel's TCP socket counters (sockstat: in use, orphans, time-wait,
   * allocated; IPv4 and IPv6), read without walking any table: while they
   * stand still no socket was hashed or unhashed, so the tables need not be
   * read again. Null where they cannot be read.
   */
  counters?(): string | null;
}

const LITTLE_ENDIAN = endianness() === 'LE';

/** Shared by every read: a table of a few thousand sockets fits in one. */
let tableBuffer = Buffer.allocUnsafe(256 * 1024);

/**
 * A read of these tables returns at most a page, and ends short of it only
 * when the table ended (the kernel's seq_file fills a read until the next
 * row, of fixed width, would not fit): a read this much short of a 4 KiB
 * page is the last, and the read that would return 0 (which walks the
 * kernel's socket hashes once more, as long as the first) is not made.
 */
const LAST_READ_BELOW = 4096 - 256;

/**
 * One table's text, read into one buffer (grown when a table outgrows it).
 * Each read walks the kernel's socket hash tables, a cost set by their size
 * (milliseconds on a machine sized for many sockets), not by what is in them.
 */
function readTable(path: string): string | null {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch {
    return null;
  }
  try {
    let length = 0;
    for (;;) {
      if (length === tableBuffer.length) {
        const bigger = Buffer.allocUnsafe(tableBuffer.length * 2);
        tableBuffer.copy(bigger, 0, 0, length);
        tableBuffer = bigger;
      }
      const got = readSync(fd, tableBuffer, length, tableBuffer.length - length, null);
      length += got;
      if (got < LAST_READ_BELOW) return tableBuffer.toString('latin1', 0, length);
    }
  } catch {
    return null;
  } finally {
    closeSync(fd);
  }
}

/** The "inuse" count of a sockstat line ("TCP: inuse 5 orphan 0 ..."); null when it cannot be read. */
function inUse(path: string, label: string): number | null {
  const text = readSmall(path);
  const match = text === null ? null : new RegExp(`^${label}: inuse (\\d+)`, 'm').exec(text);
  return match ? Number(match[1]) : null;
}

function readSmall(path: string): string | null {
  try {
    return readFileSync(path, 'latin1');
  } catch {
    return null;
  }
}

export function procSocketTable(procRoot: string): SocketTable {
  return {
    listening() {
      // /proc/net is this process's network namespace: a run in another (unshare -n) is not seen.
      // A family with no TCP socket in use (sockstat) has no listener: its table is not walked.
      const v4 = inUse(`${procRoot}/net/sockstat`, 'TCP') === 0 ? '' : readTable(`${procRoot}/net/tcp`);
      const v6 = inUse(`${procRoot}/net/sockstat6`, 'TCP6') === 0 ? '' : readTable(`${procRoot}/net/tcp6`);
      if (v4 === null && v6 === null) return null;
      return [...(v4 === null ? [] : parseListening(v4, LITTLE_ENDIAN)), ...(v6 === null ? [] : parseListening(v6, LITTLE_ENDIAN))];
    },
    counters() {
      const v4 = readSmall(`${procRoot}/net/sockstat`);
      const v6 = readSmall(`${procRoot}/net/sockstat6`);
      if (v4 === null) return null;
      return `${/^TCP: .*$/m.exec(v4)?.[0] ?? ''}|${v6 === null ? '' : (/^TCP6: .*$/m.exec(v6)?.[0] ?? '')}`;
    },
    socketInodes(pid) {
      const dir = `${procRoot}/${pid}/fd`;
      let names: string[];
      try {
        names = readdirSync(dir);
      } catch {
        return null;
      }
      const inodes: number[] = [];
      for (const name of names) {
        let target: string;
        try {
          target = readlinkSync(`${dir}/${name}`);
        } catch {
          continue; // closed meanwhile
        }
        if (target.startsWith('socket:[')) inodes.push(Number(target.slice(8, -1)));
      }
      return inodes;
    },
  };
}
