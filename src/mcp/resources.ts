// `warden mcp`'s resources: a run as `warden://runs/{id}` (its result as a
// model reads it: verdict, exit, advice, notes, each stream cut to its head
// and tail around a marker naming the show call), and each stream as
// `warden://runs/{id}/stdout` and `/stderr` (cut the same way, to a size a
// model takes). The newest runs are listed, so a client that offers
// resources by name (Claude Code's @warden: mentions) offers them; the three
// are resource templates for any other run.

import { McpError } from '@modelcontextprotocol/sdk/types.js';
import type { ReadResourceResult, Resource, ResourceTemplate } from '@modelcontextprotocol/sdk/types.js';
import type { RunSummary } from '../shared/history';
import type { RunResult } from '../shared/result';
import { RUN_ID } from '../shared/schemas';
import { cutMarker, cutStream, type Stream } from '../shared/model-answer';
import type { HostLink } from './host-link';
import { MCP_PAGER, runAnswerParts } from './render';

/** MCP's code for a resource that is not there. */
export const RESOURCE_NOT_FOUND = -32002;
/** Runs resources/list names per page. */
const LIST_PAGE = 50;
/** Characters of one stream a stream resource holds, head and tail: what a model is given at once. */
export const STREAM_RESOURCE_CHARS = 24_000;

export const RESOURCE_TEMPLATES: ResourceTemplate[] = [
  {
    uriTemplate: 'warden://runs/{id}',
    name: 'run',
    title: 'A Warden run',
    description: "A run's result as a model reads it: verdict, exit code or signal, elapsed against its limit, advice and notes, then its stdout and stderr cut to head and tail (the marker names the show call for the rest).",
    mimeType: 'text/plain',
  },
  { uriTemplate: 'warden://runs/{id}/stdout', name: 'run-stdout', title: "A Warden run's stdout", description: "A run's stdout, its head and tail when long (the marker names the show call for the rest).", mimeType: 'text/plain' },
  { uriTemplate: 'warden://runs/{id}/stderr', name: 'run-stderr', title: "A Warden run's stderr", description: "A run's stderr, its head and tail when long (the marker names the show call for the rest).", mimeType: 'text/plain' },
];

/** A resource URI as a run and what of it, or null when it names none. */
export function parseRunUri(uri: string): { id: string; part: 'run' | Stream } | null {
  const m = /^warden:\/\/runs\/([^/?#]+)(?:\/(stdout|stderr))?$/.exec(uri);
  if (!m || !RUN_ID.test(m[1]!)) return null;
  return { id: m[1]!, part: (m[2] as Stream | undefined) ?? 'run' };
}

function what(run: Pick<RunSummary, 'command' | 'code' | 'argv' | 'session'>): string {
  if (run.command) return run.command;
  if (run.argv) return run.argv.join(' ');
  const first = (run.code ?? '').split('\n').find((line) => line.trim() !== '') ?? '';
  return `python${run.session ? `[${run.session}]` : ''}: ${first.trim()}`;
}

/** The newest runs as resources, a page at a time (the history's own cursor). */
export async function listRunResources(link: HostLink, cursor: string | undefined): Promise<{ resources: Resource[]; nextCursor?: string }> {
  const page = await link.call((api) => api.history({ limit: LIST_PAGE, ...(cursor !== undefined ? { cursor } : {}) }));
  const resources = page.runs.map((run): Resource => {
    const command = what(run).replace(/\s+/g, ' ');
    const status = run.verdict ?? run.state;
    return {
      uri: `warden://runs/${run.id}`,
      name: run.id,
      title: `${command.length > 60 ? `${command.slice(0, 59)}…` : command} (${status})`,
      description: `Warden run ${run.id}, ${status}${run.exitCode !== null ? `, exit ${run.exitCode}` : ''}, started ${run.startedAt}: ${command.slice(0, 200)}`,
      mimeType: 'text/plain',
    };
  });
  return { resources, ...(page.nextCursor ? { nextCursor: page.nextCursor } : {}) };
}

/** One stream of a run for a model: whole, or its head and tail around the marker naming the show call. */
export function streamResourceText(run: RunResult, stream: Stream, chars = STREAM_RESOURCE_CHARS): string {
  const text = run[stream];
  return cutStream(text, chars, (from, n) => cutMarker(MCP_PAGER, run.id, stream, from, n, text.length), 0).text;
}

export async function readRunResource(link: HostLink, uri: string): Promise<ReadResourceResult> {
  const named = parseRunUri(uri);
  if (!named) throw new McpError(RESOURCE_NOT_FOUND, `No Warden resource ${JSON.stringify(uri)}: Warden's are warden://runs/ID, warden://runs/ID/stdout and warden://runs/ID/stderr.`);
  const run = await link.call((api) => api.get(named.id));
  if (!run) throw new McpError(RESOURCE_NOT_FOUND, `No run with id ${JSON.stringify(named.id)} (the list tool shows the runs there are).`);
  const text = named.part === 'run' ? runAnswerParts(run, { streamChars: 8000, base: { stdout: 0, stderr: 0 }, budget: null }).text : streamResourceText(run, named.part);
  return { contents: [{ uri, mimeType: 'text/plain', text }] };
}
