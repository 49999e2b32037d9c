// tcp:[HOST:]PORT: ready when a connection is accepted. With no host, both
// loopbacks are tried (a dev server on "localhost" may listen on ::1 alone).

import { connect } from 'node:net';
import { failed, passed, socketWhy, type Attempt } from './attempt';

function connectOnce(host: string, port: number, timeoutMs: number): Promise<Attempt> {
  return new Promise((resolve) => {
    const socket = connect({ host, port, autoSelectFamily: true });
    const timer = setTimeout(() => done(failed(`no answer within ${timeoutMs} ms`)), timeoutMs);
    const done = (attempt: Attempt) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(attempt);
    };
    socket.once('connect', () => done(passed({ port })));
    socket.once('error', (error: NodeJS.ErrnoException) => done(failed(socketWhy(error))));
  });
}

export async function probeTcp(host: string | null, port: number, timeoutMs: number): Promise<Attempt> {
  if (host !== null) return connectOnce(host, port, timeoutMs);
  const [v4, v6] = await Promise.all([connectOnce('127.0.0.1', port, timeoutMs), connectOnce('::1', port, timeoutMs)]);
  return v4.ok ? v4 : v6.ok ? v6 : v4;
}
