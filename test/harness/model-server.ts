// A scripted model on 127.0.0.1 for driving the real agent CLIs: it speaks
// the Anthropic Messages API (Claude Code), the OpenAI Responses API (Codex,
// through a `model_providers` entry) and Gemini's generateContent /
// streamGenerateContent (Gemini CLI, through GOOGLE_GEMINI_BASE_URL), all as
// server-sent events the way the CLIs ask for them.
//
// Each conversation plays a script: step N is played when the request carries
// N tool results (so the harness's own side requests, retries and history
// replays do not move it on). A step calls a Warden MCP tool or the harness's
// own shell tool, or answers with text and ends the turn. Every tool result
// the harness sends back is recorded exactly as it arrived (what the model
// sees), once per call id.

import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type Api = 'anthropic' | 'openai' | 'gemini';

export type Step =
  /** Calls one of `warden mcp`'s tools (run, wait, stop, show, ...) with these arguments. */
  | { mcp: string; args: Record<string, unknown> }
  /** Calls the harness's own shell tool (Bash, shell/exec_command, run_shell_command) with this command; `background`: Claude Code's run_in_background. */
  | { shell: string; timeoutMs?: number; background?: boolean }
  /** Calls a tool of the harness's own by its exact name (Claude Code's ReadMcpResourceTool, Codex's read_mcp_resource). */
  | { call: string; args: Record<string, unknown> }
  /** Answers with text and ends the turn. */
  | { text: string };

/** A step, or one made from the tool results so far (to pass on a run id the model was given). */
export type ScriptStep = Step | ((results: ToolResult[]) => Step);

/** One tool result as the harness sent it back. */
export interface ToolResult {
  api: Api;
  /** The tool name the model called (as the harness named it). */
  tool: string;
  callId: string;
  /** What the model reads: the result's text as the API carries it (Gemini: the functionResponse's JSON). */
  text: string;
  /** The tool result item exactly as it came in the request. */
  raw: unknown;
  /** The harness flagged it as an error (Anthropic is_error). */
  isError?: boolean;
}

export interface ToolCallMade {
  api: Api;
  tool: string;
  args: Record<string, unknown>;
}

export interface ModelServer {
  url: string;
  port: number;
  /** Every tool result received, in order, once per call. */
  results: ToolResult[];
  /** Every tool call this server asked for. */
  calls: ToolCallMade[];
  /** The tool names offered in the last main-conversation request. */
  toolNames: string[];
  /** Every request: method, path and parsed body (for debugging a failed case). */
  requests: { method: string; path: string; body: unknown }[];
  /** Replaces the script (the next conversation plays it from step 0). */
  play(script: ScriptStep[]): void;
  close(): Promise<void>;
}

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

/** The text of a content value that is a string or a list of text blocks. */
function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    return content
      .map((block) => {
        if (typeof block === 'string') return block;
        if (isObject(block) && typeof block.text === 'string') return block.text;
        return JSON.stringify(block);
      })
      .join('\n');
  }
  return JSON.stringify(content);
}

// ------------------------------------------------------------ tool names

const SHELL_TOOLS: Record<Api, string[]> = {
  anthropic: ['Bash'],
  openai: ['shell', 'exec_command', 'container.exec', 'local_shell', 'shell_command'],
  gemini: ['run_shell_command'],
};

/** The harness's name for Warden's MCP tool `name` among the tools offered. */
function mcpToolName(names: string[], name: string): string | undefined {
  return (
    names.find((n) => n === `mcp__warden__${name}`) ??
    names.find((n) => n === `warden__${name}`) ??
    names.find((n) => n === `mcp_warden_${name}`) ??
    names.find((n) => n.endsWith(`__${name}`) && n.includes('warden')) ??
    names.find((n) => n === name)
  );
}

// ------------------------------------------------------------ the server

export async function startModelServer(): Promise<ModelServer> {
  let script: ScriptStep[] = [];
  const results: ToolResult[] = [];
  const seen = new Set<string>();
  const calls: ToolCallMade[] = [];
  const requests: ModelServer['requests'] = [];
  let toolNames: string[] = [];
  let counter = 0;

  const record = (result: ToolResult): void => {
    const key = `${result.api}:${result.callId}`;
    if (seen.has(key)) return;
    seen.add(key);
    results.push(result);
  };

  /** The step for a request carrying `done` tool results; a tool call turns into the API's shape by the caller. */
  const stepFor = (api: Api, names: string[], done: number): { name: string; args: Json } | { text: string } => {
    const entry = script[done] ?? { text: 'Done.' };
    const step = typeof entry === 'function' ? entry(results) : entry;
    if ('text' in step) return step;
    if ('mcp' in step) {
      const name = mcpToolName(names, step.mcp);
      if (name === undefined) return { text: `NO TOOL ${step.mcp} among ${names.join(', ')}` };
      return { name, args: step.args };
    }
    if ('call' in step) return names.includes(step.call) ? { name: step.call, args: step.args } : { text: `NO TOOL ${step.call} among ${names.join(', ')}` };
    const name = SHELL_TOOLS[api].find((n) => names.includes(n));
    if (name === undefined) return { text: `NO SHELL TOOL among ${names.join(', ')}` };
    return { name, args: shellArgs(api, name, step) };
  };

  const server: Server = createServer((req, res) => {
    void (async () => {
      const raw = await readBody(req);
      let body: unknown = null;
      try {
        body = raw === '' ? null : JSON.parse(raw);
      } catch {
        body = raw;
      }
      const path = req.url ?? '/';
      requests.push({ method: req.method ?? '', path, body });
      try {
        if (path.includes('/messages/count_tokens')) return json(res, { input_tokens: 100 });
        if (path.includes('/messages')) return anthropic(res, isObject(body) ? body : {});
        if (path.includes('/responses')) return openai(res, isObject(body) ? body : {});
        if (path.includes(':countTokens')) return json(res, { totalTokens: 100 });
        if (path.includes(':streamGenerateContent') || path.includes(':generateContent')) {
          return gemini(res, isObject(body) ? body : {}, path.includes(':streamGenerateContent'));
        }
        if (path.includes('/models')) return json(res, { data: [], models: [] });
        json(res, {}, 404);
      } catch (error) {
        json(res, { error: { message: String(error) } }, 500);
      }
    })();
  });

  // --------------------------------------------------------- Anthropic

  const anthropic = (res: ServerResponse, body: Json): void => {
    const tools = Array.isArray(body.tools) ? body.tools.filter(isObject) : [];
    const names = tools.map((t) => String(t.name));
    const messages = Array.isArray(body.messages) ? body.messages.filter(isObject) : [];
    const toolNamesById = new Map<string, string>();
    let done = 0;
    for (const message of messages) {
      if (!Array.isArray(message.content)) continue;
      for (const block of message.content.filter(isObject)) {
        if (block.type === 'tool_use') toolNamesById.set(String(block.id), String(block.name));
        if (block.type === 'tool_result') {
          done++;
          const callId = String(block.tool_use_id);
          record({ api: 'anthropic', tool: toolNamesById.get(callId) ?? '?', callId, text: textOf(block.content), raw: block, isError: block.is_error === true });
        }
      }
    }
    // A side request (a title, a quota probe): no tools of ours, a short answer.
    const main = names.includes('Bash') || names.some((n) => n.includes('warden'));
    if (main) toolNames = names;
    const step = main ? stepFor('anthropic', names, done) : { text: 'ok' };
    const id = `msg_${++counter}`;
    const model = typeof body.model === 'string' ? body.model : 'claude-sonnet-4-5';
    const usage = { input_tokens: 100, output_tokens: 10, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };
    const block = 'text' in step ? { type: 'text', text: step.text } : { type: 'tool_use', id: `toolu_${counter}`, name: step.name, input: step.args };
    if (!('text' in step)) calls.push({ api: 'anthropic', tool: step.name, args: step.args });
    const stopReason = 'text' in step ? 'end_turn' : 'tool_use';
    if (body.stream !== true) {
      return json(res, { id, type: 'message', role: 'assistant', model, content: [block], stop_reason: stopReason, stop_sequence: null, usage });
    }
    const events: [string, Json][] = [['message_start', { type: 'message_start', message: { id, type: 'message', role: 'assistant', model, content: [], stop_reason: null, stop_sequence: null, usage } }]];
    if (block.type === 'text') {
      events.push(['content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }]);
      events.push(['content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: block.text } }]);
    } else {
      events.push(['content_block_start', { type: 'content_block_start', index: 0, content_block: { ...block, input: {} } }]);
      events.push(['content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: JSON.stringify(block.input) } }]);
    }
    events.push(['content_block_stop', { type: 'content_block_stop', index: 0 }]);
    events.push(['message_delta', { type: 'message_delta', delta: { stop_reason: stopReason, stop_sequence: null }, usage: { output_tokens: 10 } }]);
    events.push(['message_stop', { type: 'message_stop' }]);
    sse(res, events);
  };

  // --------------------------------------------------------- OpenAI Responses

  const openai = (res: ServerResponse, body: Json): void => {
    const tools = Array.isArray(body.tools) ? body.tools.filter(isObject) : [];
    // Codex offers an MCP server's tools as one namespace ("mcp__warden") of functions.
    const namespaced = new Map<string, { namespace: string; name: string }>();
    const names = tools.flatMap((t) => {
      if (t.type === 'namespace' && typeof t.name === 'string' && Array.isArray(t.tools)) {
        return t.tools.filter(isObject).map((inner) => {
          const full = `${String(t.name)}__${String(inner.name)}`;
          namespaced.set(full, { namespace: String(t.name), name: String(inner.name) });
          return full;
        });
      }
      return typeof t.name === 'string' ? [t.name] : typeof t.type === 'string' ? [t.type] : [];
    });
    const input = Array.isArray(body.input) ? body.input.filter(isObject) : [];
    const toolNamesById = new Map<string, string>();
    let done = 0;
    for (const item of input) {
      if (typeof item.call_id === 'string' && typeof item.name === 'string') {
        toolNamesById.set(item.call_id, typeof item.namespace === 'string' ? `${item.namespace}__${item.name}` : item.name);
      }
      if (item.type === 'local_shell_call' && typeof item.call_id === 'string') toolNamesById.set(item.call_id, 'local_shell');
      if (typeof item.type === 'string' && item.type.endsWith('_output') && typeof item.call_id === 'string') {
        done++;
        record({ api: 'openai', tool: toolNamesById.get(item.call_id) ?? '?', callId: item.call_id, text: textOf(item.output), raw: item });
      }
    }
    const main = names.length > 0;
    if (main) toolNames = names;
    const step = main ? stepFor('openai', names, done) : { text: 'ok' };
    const n = ++counter;
    let item: Json;
    if ('text' in step) {
      item = { type: 'message', role: 'assistant', id: `msg_${n}`, status: 'completed', content: [{ type: 'output_text', text: step.text, annotations: [] }] };
    } else {
      calls.push({ api: 'openai', tool: step.name, args: step.args });
      item =
        step.name === 'local_shell'
          ? { type: 'local_shell_call', id: `lsh_${n}`, call_id: `call_${n}`, status: 'completed', action: { type: 'exec', ...step.args } }
          : { type: 'function_call', id: `fc_${n}`, call_id: `call_${n}`, ...(namespaced.get(step.name) ?? { name: step.name }), arguments: JSON.stringify(step.args), status: 'completed' };
    }
    const response = { id: `resp_${n}`, object: 'response', status: 'completed', model: body.model ?? 'gpt-5', output: [item], usage: { input_tokens: 100, input_tokens_details: { cached_tokens: 0 }, output_tokens: 10, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 110 } };
    const events: [string, Json][] = [
      ['response.created', { type: 'response.created', response: { ...response, status: 'in_progress', output: [] } }],
      ['response.output_item.added', { type: 'response.output_item.added', output_index: 0, item }],
    ];
    if ('text' in step) events.push(['response.output_text.delta', { type: 'response.output_text.delta', item_id: item.id, output_index: 0, content_index: 0, delta: step.text }]);
    events.push(['response.output_item.done', { type: 'response.output_item.done', output_index: 0, item }]);
    events.push(['response.completed', { type: 'response.completed', response }]);
    sse(res, events);
  };

  // --------------------------------------------------------- Gemini

  const gemini = (res: ServerResponse, body: Json, stream: boolean): void => {
    const tools = Array.isArray(body.tools) ? body.tools.filter(isObject) : [];
    const names = tools.flatMap((t) => (Array.isArray(t.functionDeclarations) ? t.functionDeclarations.filter(isObject).map((d) => String(d.name)) : []));
    const contents = Array.isArray(body.contents) ? body.contents.filter(isObject) : [];
    let done = 0;
    let index = 0;
    for (const content of contents) {
      if (!Array.isArray(content.parts)) continue;
      for (const part of content.parts.filter(isObject)) {
        if (!isObject(part.functionResponse)) continue;
        done++;
        const fr = part.functionResponse;
        const callId = typeof fr.id === 'string' ? fr.id : `${String(fr.name)}#${index}`;
        index++;
        const response = fr.response;
        const text = isObject(response) && typeof response.output === 'string' && Object.keys(response).length === 1 ? response.output : JSON.stringify(response);
        record({ api: 'gemini', tool: String(fr.name), callId, text, raw: part });
      }
    }
    const main = names.length > 0;
    if (main) toolNames = names;
    // Side requests (the next-speaker check, a summary): JSON the checks accept as "the user speaks next".
    const step = main ? stepFor('gemini', names, done) : { text: JSON.stringify({ reasoning: 'The model answered.', next_speaker: 'user' }) };
    const part = 'text' in step ? { text: step.text } : { functionCall: { name: step.name, args: step.args, id: `call_${++counter}` } };
    if (!('text' in step)) calls.push({ api: 'gemini', tool: step.name, args: step.args });
    const answer = {
      candidates: [{ content: { role: 'model', parts: [part] }, finishReason: 'STOP', index: 0 }],
      usageMetadata: { promptTokenCount: 100, candidatesTokenCount: 10, totalTokenCount: 110 },
      modelVersion: 'gemini-2.5-pro',
    };
    if (!stream) return json(res, answer);
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    res.end(`data: ${JSON.stringify(answer)}\r\n\r\n`);
  };

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    results,
    calls,
    get toolNames() {
      return toolNames;
    },
    requests,
    play(next) {
      script = next;
      results.length = 0;
      calls.length = 0;
      seen.clear();
      requests.length = 0;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The arguments of each harness's own shell tool for a command. */
function shellArgs(api: Api, name: string, step: { shell: string; timeoutMs?: number; background?: boolean }): Json {
  if (api === 'anthropic') return { command: step.shell, description: 'Run the command', ...(step.timeoutMs !== undefined ? { timeout: step.timeoutMs } : {}), ...(step.background ? { run_in_background: true } : {}) };
  if (api === 'gemini') return { command: step.shell, description: 'Run the command' };
  if (name === 'exec_command') return { cmd: step.shell, ...(step.timeoutMs !== undefined ? { yield_time_ms: step.timeoutMs } : {}) };
  if (name === 'shell_command') return { command: step.shell, ...(step.timeoutMs !== undefined ? { timeout_ms: step.timeoutMs } : {}) };
  return { command: ['bash', '-lc', step.shell], ...(step.timeoutMs !== undefined ? { timeout_ms: step.timeoutMs } : {}) };
}

function json(res: ServerResponse, body: unknown, status = 200): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

function sse(res: ServerResponse, events: [string, Json][]): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
  res.end(events.map(([event, data]) => `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`).join(''));
}
