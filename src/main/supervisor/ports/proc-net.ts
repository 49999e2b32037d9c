// The kernel's TCP tables (/proc/net/tcp and /proc/net/tcp6, proc_net_tcp(5))
// to the sockets that listen: state 0A (TCP_LISTEN), each with its local
// address and port and its inode, which names it among a process's
// descriptors (/proc/PID/fd/N -> socket:[INODE]). Pure: the text in, rows out.

/** A listening socket as the table shows it. */
export interface ListenEntry {
  inode: number;
  port: number;
  /** 127.0.0.1, 0.0.0.0, ::1, ::, ::ffff:127.0.0.1 */
  address: string;
}

/** The state column's value for a socket in LISTEN. */
const LISTEN = '0A';

/**
 * The 32-bit words of an address as the kernel prints them: each in the
 * machine's byte order, so on a little-endian machine 127.0.0.1 reads
 * 0100007F. Returns the address's bytes in network order.
 */
function addressBytes(hex: string, littleEndian: boolean): number[] | null {
  if (!/^[0-9A-Fa-f]+$/.test(hex) || hex.length % 8 !== 0) return null;
  const bytes: number[] = [];
  for (let word = 0; word < hex.length; word += 8) {
    const four = [0, 2, 4, 6].map((i) => parseInt(hex.slice(word + i, word + i + 2), 16));
    bytes.push(...(littleEndian ? four.reverse() : four));
  }
  return bytes;
}

/** An IPv6 address in its short form (RFC 5952): the longest run of two or more zero groups as ::, an IPv4-mapped one as ::ffff:a.b.c.d. */
export function formatIpv6(bytes: number[]): string {
  if (bytes.slice(0, 10).every((b) => b === 0) && bytes[10] === 0xff && bytes[11] === 0xff) return `::ffff:${bytes.slice(12).join('.')}`;
  const groups: number[] = [];
  for (let i = 0; i < 16; i += 2) groups.push((bytes[i]! << 8) | bytes[i + 1]!);
  let bestAt = -1;
  let bestLength = 1;
  for (let i = 0; i < 8; ) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLength) {
      bestAt = i;
      bestLength = j - i;
    }
    i = j;
  }
  const hex = groups.map((g) => g.toString(16));
  if (bestAt < 0) return hex.join(':');
  return `${hex.slice(0, bestAt).join(':')}::${hex.slice(bestAt + bestLength).join(':')}`;
}

/** The address text of a table's local_address part, IPv4 (8 hex digits) or IPv6 (32). */
export function formatAddress(hex: string, littleEndian: boolean): string | null {
  const bytes = addressBytes(hex, littleEndian);
  if (bytes === null) return null;
  if (bytes.length === 4) return bytes.join('.');
  if (bytes.length === 16) return formatIpv6(bytes);
  return null;
}

/**
 * The listening sockets of one table's text. Rows that are not LISTEN, that
 * carry no inode (0: a socket being torn down) or that do not parse are left
 * out; the header line is skipped.
 */
export function parseListening(text: string, littleEndian: boolean): ListenEntry[] {
  const entries: ListenEntry[] = [];
  let at = text.indexOf('\n') + 1;
  if (at === 0) return entries;
  while (at < text.length) {
    let end = text.indexOf('\n', at);
    if (end < 0) end = text.length;
    const line = text.slice(at, end);
    at = end + 1;
    // Most rows of a busy machine are connections: the state column decides before any split.
    if (!line.includes(` ${LISTEN} `)) continue;
    const fields = line.trim().split(/\s+/);
    // sl, local_address, rem_address, st, tx:rx, tr:when, retrnsmt, uid, timeout, inode
    if (fields.length < 10 || fields[3] !== LISTEN) continue;
    const local = fields[1]!;
    const colon = local.indexOf(':');
    if (colon < 0) continue;
    const address = formatAddress(local.slice(0, colon), littleEndian);
    const portHex = local.slice(colon + 1);
    const port = /^[0-9A-Fa-f]{4}$/.test(portHex) ? parseInt(portHex, 16) : NaN;
    const inode = /^\d+$/.test(fields[9]!) ? Number(fields[9]) : 0;
    if (address === null || !(port > 0) || inode === 0) continue;
    entries.push({ inode, port, address });
  }
  return entries;
}
