// Readiness in words, for every answer that reports it (the CLI's, MCP's,
// the run's notes). Kept apart from the probes: a client that only prints
// a result loads none of their sockets or processes.

import type { ReadyProbe, ReadyReport } from './result';
import { seconds } from './format';

/** One line on probes that did not pass: "tcp:5173 (connection refused, 480 tries); log:/ready/ (no line matched yet (12 read))". */
export function failingProbes(probes: ReadyProbe[]): string {
  return probes
    .filter((p) => !p.passed)
    .map((p) => `${p.probe} (${p.last ?? 'not passed'}${p.probe.startsWith('log:') || p.attempts < 2 ? '' : `, ${p.attempts} tries`})`)
    .join('; ');
}

/** "ready after 1.8 s, listening on 5173 and 24678" */
export function readyLine(report: ReadyReport): string {
  const ports = [...new Set(report.ports.map((p) => p.port))];
  return `ready after ${seconds(report.afterMs)}${ports.length > 0 ? `, listening on ${ports.join(' and ')}` : ''}`;
}
