// A run request as the calling process would run it itself: the host runs it
// in the caller's working directory (a relative cwd resolved there) and with
// the caller's environment (baseEnv), not the host's own. The CLI and
// `warden mcp` send every request through this.

import { resolve } from 'node:path';
import type { RunRequest } from '../shared/request';

export function asThisProcess(request: RunRequest, cwd: string = process.cwd(), env: NodeJS.ProcessEnv = process.env): RunRequest {
  const baseEnv: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) if (value !== undefined) baseEnv[name] = value;
  return { ...request, cwd: resolve(cwd, request.cwd ?? '.'), baseEnv };
}
