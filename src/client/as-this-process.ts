// A run request as the calling process would run it itself: the host runs it
// in the caller's working directory (a relative cwd resolved there) and with
// the caller's environment (baseEnv), not the host's own. The CLI and
// `warden mcp` send every request through this.

import { resolve } from 'node:path';
import { isPythonRequest, type RunRequest } from '../shared/request';
import { processContext } from './process-context';

export function asThisProcess(request: RunRequest, cwd: string = process.cwd(), env: NodeJS.ProcessEnv = process.env): RunRequest {
  const baseEnv: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) if (value !== undefined) baseEnv[name] = value;
  // And its umask and resource limits, which a command inherits from whoever runs it (a script's interpreter is the session's).
  const context = isPythonRequest(request) ? {} : processContext();
  return { ...request, cwd: resolve(cwd, request.cwd ?? '.'), baseEnv, ...context };
}
