// What the port finder reads of /proc: the listening sockets of this network
// namespace (net/tcp and net/tcp6) and the socket inodes a process holds
// (its fd directory's links, socket:[INODE]). Reading a process's
// descriptors costs a readdir and a readlink per descriptor, so the finder
// asks only when it must (finder.ts).

import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { endianness } from 'node:os';
import { parseListening, type ListenEntry } from './proc-net';

export interface SocketTable {
  /** Every listening TCP socket now; null when the tables cannot be read (no /proc). */
  listening(): ListenEntry[] | null;
  /** The socket inodes a process holds; null when it is gone or not ours to read. */
  socketInodes(pid: number): number[] | null;
}

const LITTLE_ENDIAN = endianness() === 'LE';

function readTable(path: string): string | null {
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
      const v4 = readTable(`${procRoot}/net/tcp`);
      const v6 = readTable(`${procRoot}/net/tcp6`);
      if (v4 === null && v6 === null) return null;
      return [...(v4 === null ? [] : parseListening(v4, LITTLE_ENDIAN)), ...(v6 === null ? [] : parseListening(v6, LITTLE_ENDIAN))];
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
