// http(s)://...: ready when a GET answers with a status in the range (200-399
// unless widened). As Kubernetes' httpGet probe: a redirect is not followed
// (3xx passes as it is), and an https server's certificate is not checked
// (a dev server's is self-signed); the body is not read beyond its start.

import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { failed, passed, socketWhy, type Attempt } from './attempt';

export function probeHttp(url: URL, status: { min: number; max: number }, timeoutMs: number): Promise<Attempt> {
  return new Promise((resolve) => {
    const request = url.protocol === 'https:' ? httpsRequest : httpRequest;
    let settled = false;
    const done = (attempt: Attempt) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      req.destroy();
      resolve(attempt);
    };
    const req = request(url, { method: 'GET', headers: { 'user-agent': 'warden-ready-probe', accept: '*/*' }, rejectUnauthorized: false, agent: false }, (res) => {
      const code = res.statusCode ?? 0;
      res.resume();
      const port = Number(url.port || (url.protocol === 'https:' ? 443 : 80));
      done(code >= status.min && code <= status.max ? passed({ port }) : failed(`answered ${code}${res.statusMessage ? ` ${res.statusMessage}` : ''}, not ${status.min}-${status.max}`));
    });
    const timer = setTimeout(() => done(failed(`no answer within ${timeoutMs} ms`)), timeoutMs);
    req.once('error', (error: NodeJS.ErrnoException) => done(failed(socketWhy(error))));
    req.end();
  });
}
