// The port a server's "address already in use" error names, as servers
// print it: Node (listen EADDRINUSE: address already in use 127.0.0.1:5173),
// Go (listen tcp :8080: bind: address already in use), Vite (Port 5173 is
// already in use), Puma (bind(2) for "127.0.0.1" port 3000), uvicorn
// (address ('127.0.0.1', 8000): address already in use). Pure.

const IN_USE = /EADDRINUSE|address already in use|is already in use|port is in use/i;

const PATTERNS: RegExp[] = [
  /already in use[^\n]*?(?:\[[0-9A-Fa-f:.]*\]|[\w.-]*|::):(\d{1,5})(?!\d)/i,
  /listen tcp\d? [^\s]*?:(\d{1,5}): bind: address already in use/i,
  /bind\(2\) for "[^"]*" port (\d{1,5})/i,
  /\(\s*'[^']*',\s*(\d{1,5})\s*\)[^\n]*address already in use/i,
  /\bport (\d{1,5})\b[^\n]*(?:already in use|EADDRINUSE)/i,
  /EADDRINUSE[^\n]*?:(\d{1,5})(?!\d)/i,
];

export interface InUse {
  /** The port it names, when it names one. */
  port: number | null;
  /** The line that said so (trimmed). */
  line: string;
}

/** The first "address in use" line of some output and the port it names; null when there is none. */
export function addressInUse(output: string): InUse | null {
  if (!IN_USE.test(output)) return null;
  for (const raw of output.split(/\r?\n/)) {
    if (!IN_USE.test(raw)) continue;
    const line = raw.trim();
    for (const pattern of PATTERNS) {
      const match = pattern.exec(line);
      const port = match ? Number(match[1]) : NaN;
      if (port >= 1 && port <= 65535) return { port, line };
    }
    return { port: null, line };
  }
  return null;
}
