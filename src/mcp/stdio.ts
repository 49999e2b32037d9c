// The stdio transport of `warden mcp`: newline-delimited JSON-RPC on stdin
// and stdout, as the SDK's StdioServerTransport, but every message is
// answered and none ends the server. A line over MAX_MESSAGE_BYTES is skipped
// as it arrives (never held whole) and answered with a JSON-RPC error; a line
// that is not JSON gets "Parse error", one that is not a JSON-RPC message
// (a bad id, no method) "Invalid Request", with its id when it had a usable
// one, else null (JSON-RPC 2.0, section 5).

import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { JSONRPCMessageSchema, type JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

/** The longest message taken: longer ones are answered with an error and skipped. */
export const MAX_MESSAGE_BYTES = 10 * 1024 * 1024;
/** Of a message too long, the first bytes looked at for its id. */
const ID_WINDOW = 4096;

const PARSE_ERROR = -32700;
const INVALID_REQUEST = -32600;

type Id = string | number | null;

/** An id JSON-RPC allows: a string or a whole number. */
function usableId(value: unknown): Id {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' && Number.isSafeInteger(value)) return value;
  return null;
}

/** The id of a message too long to parse, read from its start: `"id": 12` or `"id": "abc"` at its top level, if one is there. */
function idFromHead(head: string): Id {
  const match = /^\s*\{(?:[^{}[\]"]|"(?:[^"\\]|\\.)*")*?"id"\s*:\s*(-?\d{1,15}|"(?:[^"\\]|\\.){0,200}")/.exec(head);
  if (!match) return null;
  try {
    return usableId(JSON.parse(match[1]!));
  } catch {
    return null;
  }
}

export class BoundedStdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  private chunks: Buffer[] = [];
  private size = 0;
  /** Skipping the rest of a line over the bound; its id, when its start named one. */
  private skipping: { id: Id } | null = null;
  private closed = false;

  constructor(
    private readonly stdin: NodeJS.ReadableStream = process.stdin,
    private readonly stdout: NodeJS.WritableStream = process.stdout,
    private readonly maxBytes: number = MAX_MESSAGE_BYTES,
  ) {}

  private readonly onData = (chunk: Buffer) => {
    try {
      this.take(chunk);
    } catch (error) {
      this.onerror?.(error instanceof Error ? error : new Error(String(error)));
    }
  };
  private readonly onError = (error: Error) => this.onerror?.(error);
  private readonly onEnd = () => void this.close();

  start(): Promise<void> {
    this.stdin.on('data', this.onData);
    this.stdin.on('error', this.onError);
    this.stdin.on('end', this.onEnd);
    return Promise.resolve();
  }

  private take(chunk: Buffer): void {
    let data = chunk;
    while (data.length > 0) {
      const newline = data.indexOf(0x0a);
      if (this.skipping) {
        if (newline < 0) return;
        const { id } = this.skipping;
        this.skipping = null;
        this.reply(id, INVALID_REQUEST, `The message is over ${this.maxBytes} bytes (the most warden mcp takes); it was not read.`);
        data = data.subarray(newline + 1);
        continue;
      }
      const part = newline < 0 ? data : data.subarray(0, newline);
      if (this.size + part.length > this.maxBytes) {
        const head = Buffer.concat([...this.chunks, part.subarray(0, ID_WINDOW)]).subarray(0, ID_WINDOW).toString('utf8');
        this.chunks = [];
        this.size = 0;
        this.skipping = { id: idFromHead(head) };
        continue; // the same data again: now skipped up to its newline
      }
      if (newline < 0) {
        this.chunks.push(part);
        this.size += part.length;
        return;
      }
      const line = (this.chunks.length > 0 ? Buffer.concat([...this.chunks, part]) : part).toString('utf8').replace(/\r$/, '');
      this.chunks = [];
      this.size = 0;
      data = data.subarray(newline + 1);
      this.handleLine(line);
    }
  }

  private handleLine(line: string): void {
    if (line.trim() === '') return;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (error) {
      this.reply(null, PARSE_ERROR, `Parse error: the message is not JSON (${error instanceof Error ? error.message : String(error)}).`);
      return;
    }
    const parsed = JSONRPCMessageSchema.safeParse(value);
    if (!parsed.success) {
      const id = typeof value === 'object' && value !== null && !Array.isArray(value) ? usableId((value as { id?: unknown }).id) : null;
      const what = Array.isArray(value) ? 'a batch (an array), which MCP does not take' : 'not a JSON-RPC 2.0 request, notification or response (jsonrpc "2.0", a method, an id that is a string or a whole number)';
      this.reply(id, INVALID_REQUEST, `Invalid Request: the message is ${what}.`);
      return;
    }
    this.onmessage?.(parsed.data);
  }

  private reply(id: Id, code: number, message: string): void {
    void this.send({ jsonrpc: '2.0', id, error: { code, message } } as unknown as JSONRPCMessage).catch(() => undefined);
  }

  send(message: JSONRPCMessage): Promise<void> {
    return new Promise((resolve) => {
      if (this.closed) return resolve();
      if (this.stdout.write(`${JSON.stringify(message)}\n`)) resolve();
      else this.stdout.once('drain', resolve);
    });
  }

  close(): Promise<void> {
    if (this.closed) return Promise.resolve();
    this.closed = true;
    this.stdin.off('data', this.onData);
    this.stdin.off('error', this.onError);
    this.stdin.off('end', this.onEnd);
    this.chunks = [];
    this.onclose?.();
    return Promise.resolve();
  }
}
