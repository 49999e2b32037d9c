// Whether a listening port answers HTTP, asked once when the port is first
// seen (the app then shows a link to it): a HEAD / over a plain socket, with
// a short bound, read until the status line. Nothing more is sent, so a
// database or another protocol on the port only sees one line it rejects.

import { connect } from 'node:net';

export const HTTP_CHECK_MS = 1_000;

/** The address to connect to for a listener's address: a wildcard is reached on its loopback. */
export function reachableAddress(address: string): string {
  if (address === '0.0.0.0') return '127.0.0.1';
  if (address === '::' || address === '::0') return '::1';
  if (address.startsWith('::ffff:')) return address.slice(7);
  return address;
}

export function answersHttp(address: string, port: number, timeoutMs = HTTP_CHECK_MS): Promise<boolean> {
  return new Promise((resolve) => {
    const host = reachableAddress(address);
    const socket = connect({ host, port });
    let head = '';
    const done = (yes: boolean) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(yes);
    };
    const timer = setTimeout(() => done(false), timeoutMs);
    socket.setEncoding('latin1');
    socket.once('connect', () => socket.write(`HEAD / HTTP/1.0\r\nHost: ${host.includes(':') ? `[${host}]` : host}:${port}\r\nUser-Agent: warden-port-check\r\n\r\n`));
    socket.on('data', (chunk: string) => {
      head += chunk;
      if (head.length >= 8) done(/^HTTP\/\d(\.\d)? \d{3}/.test(head));
    });
    socket.once('end', () => done(/^HTTP\/\d(\.\d)? \d{3}/.test(head)));
    socket.once('error', () => done(false));
  });
}
