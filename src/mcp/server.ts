// The MCP server of `warden mcp`: tools/list publishes the tools of tools.ts
// with their JSON Schemas; tools/call runs one, and whatever goes wrong in a
// call (bad arguments, a refusal from the host, no host at all) is an
// isError answer with one line, never the end of the server: every kind of
// error answers isError (src/shared/errors.ts BOUNDARIES), and only what is no
// WardenError is said as an internal error.

import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, ListResourcesRequestSchema, ListResourceTemplatesRequestSchema, ListToolsRequestSchema, McpError, ReadResourceRequestSchema, type CallToolResult, type Tool } from '@modelcontextprotocol/sdk/types.js';
import { BOUNDARIES, errorText, kindOf, WardenError } from '../shared/errors';
import type { HostLink } from './host-link';
import { LOCAL_HOST_NAME } from '../client/remotes';
import { jsonSchemaOf } from './schemas';
import { TOOLS, type McpSession, type ToolContext } from './tools';
import { listRunResources, readRunResource, RESOURCE_TEMPLATES } from './resources';

const INSTRUCTIONS = `Warden supervises the commands and Python scripts you run: use its run tool instead of a plain shell for anything that may hang, run long or use much memory. Give run a limit ("30s", "10m"; default 10m): at the limit Warden interrupts the run and still returns its output, with a verdict (completed, failed, timed-out, killed, crashed, ...) and advice. Long output comes cut to its head and tail, with a marker naming the show call that pages the rest. A run that outlasts its yield (default 30s, at most 50s) keeps running: the answer says state "running" and its next field (or <next> line) names the wait call that continues it. Runs you leave live end when you exit, unless started with detach: true. For a dev server, a watcher or a database, give run ready (e.g. {"probes": ["port"]}): it answers once the server is ready, with its ports, and the server goes on until you stop it or exit; wait with until "log:/.../" after an edit; input answers a prompt of a run started with stdinPipe. list and show read past runs, and search finds lines in their output (the first Traceback of a long log) without paging through it; a person can watch every run live in the Warden app.`;

/** One line for the model: a WardenError's message, else "Internal error: ...". */
export function errorLine(error: unknown): string {
  return errorText(error, 'Internal error: ').replace(/\s+/g, ' ').trim() || 'Unknown error.';
}

/** A tool call's failure as its answer: isError by the error's kind. */
export function errorResult(error: unknown): CallToolResult {
  return { content: [{ type: 'text', text: errorLine(error) }], isError: BOUNDARIES[kindOf(error)].mcpIsError };
}

/**
 * The host a call goes to: its `host` argument (a configured remote, or
 * "local"), else the host a run with its `id` was started in or listed from,
 * else this server's own.
 */
function linkFor(args: unknown, own: HostLink, session: McpSession): HostLink {
  const { host, id } = (typeof args === 'object' && args !== null ? args : {}) as { host?: unknown; id?: unknown };
  const name = typeof host === 'string' ? host : typeof id === 'string' ? session.runHosts?.get(id) : undefined;
  if (name === undefined || name === LOCAL_HOST_NAME) return own;
  if (!session.hosts?.names().includes(name)) throw new WardenError('not-found', `No remote host named ${JSON.stringify(name)}: the hosts are ${[LOCAL_HOST_NAME, ...(session.hosts?.names() ?? [])].join(', ')} (warden remote add NAME ssh://HOST adds one).`);
  return session.hosts.link(name);
}

export function createMcpServer(link: HostLink, version: string, session: McpSession): Server {
  // resources.listChanged: a client that keeps the list (Claude Code's @warden: mentions) is told when runs start and end.
  const server = new Server({ name: 'warden', title: 'Warden', version }, { capabilities: { tools: {}, resources: { listChanged: true } }, instructions: INSTRUCTIONS });
  let listChanged: NodeJS.Timeout | null = null;
  link.watchAll((event) => {
    if ((event.type !== 'started' && event.type !== 'ended') || listChanged) return;
    // At most one notice per quarter second, however many runs start at once.
    listChanged = setTimeout(() => {
      listChanged = null;
      void server.sendResourceListChanged().catch(() => undefined);
    }, 250);
    listChanged.unref();
  });
  // Built at the first tools/list, not before initialize is answered.
  let tools: Tool[] | null = null;
  const toolList = (): Tool[] =>
    (tools ??= TOOLS.map((tool) => ({
      name: tool.name,
      title: tool.title,
      description: tool.description,
      inputSchema: jsonSchemaOf(tool.input, 'input'),
      outputSchema: jsonSchemaOf(tool.output, 'output'),
      annotations: { title: tool.title, ...tool.annotations },
      // Claude Code defers a server's tools behind its ToolSearch tool unless told to load them.
      _meta: { 'anthropic/alwaysLoad': true },
    })));
  const byName = new Map(TOOLS.map((tool) => [tool.name, tool] as const));

  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: toolList() }));
  // Resources (resources.ts): a failure is a JSON-RPC error with one line, as the spec has it for resources.
  const asMcpError = (error: unknown) => (error instanceof McpError ? error : new McpError(kindOf(error) === 'not-found' ? -32002 : kindOf(error) === 'bad-input' ? -32602 : -32603, errorLine(error)));
  server.setRequestHandler(ListResourceTemplatesRequestSchema, () => ({ resourceTemplates: RESOURCE_TEMPLATES }));
  server.setRequestHandler(ListResourcesRequestSchema, async (request) => {
    try {
      return await listRunResources(link, request.params?.cursor);
    } catch (error) {
      throw asMcpError(error);
    }
  });
  server.setRequestHandler(ReadResourceRequestSchema, async (request) => {
    try {
      return await readRunResource(link, request.params.uri);
    } catch (error) {
      throw asMcpError(error);
    }
  });
  server.setRequestHandler(CallToolRequestSchema, async (request, extra): Promise<CallToolResult> => {
    const tool = byName.get(request.params.name);
    if (!tool) return errorResult(new WardenError('not-found', `No tool named ${JSON.stringify(request.params.name)}: the tools are ${TOOLS.map((t) => t.name).join(', ')}.`));
    const token = request.params._meta?.progressToken;
    let callLink: HostLink;
    try {
      callLink = linkFor(request.params.arguments, link, session);
    } catch (error) {
      return errorResult(error);
    }
    const context: ToolContext = {
      link: callLink,
      session,
      signal: extra.signal,
      progress:
        token === undefined
          ? null
          : (progress, message, total) => {
              void extra
                .sendNotification({ method: 'notifications/progress', params: { progressToken: token, progress, ...(total !== undefined ? { total } : {}), message } })
                .catch(() => undefined);
            },
    };
    try {
      return await tool.handle(request.params.arguments, context);
    } catch (error) {
      return errorResult(error);
    }
  });
  return server;
}
