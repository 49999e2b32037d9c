// `warden k8s job|sandbox|verdict`: manifests that put Warden inside
// Kubernetes, and a pod's verdict read back into the history. Loaded only
// for `warden k8s`.

import { readFileSync } from 'node:fs';
import { parseOomExitCode } from '../exit-codes';
import { durationOption } from '../args';
import type { CliIo } from '../io';
import { splitAtCommand, tokensOf, UsageError, type OptionSpec, type OptionToken } from '../parse';
import { DEFAULT_DEADLINE_GRACE_S, jobManifest, type JobOptions } from './job';
import { checkLabel, jobNameFor, parsePodRef } from './names';
import { parseQuantity } from './quantity';
import { sandboxManifest } from './sandbox';
import { MAX_INPUT_BYTES, parseMessage, podHost, runFromMessage } from './verdict';
import { toYaml, type Json } from './yaml';

export async function k8sCommand(args: string[], io: CliIo): Promise<number> {
  const [sub, ...rest] = args;
  if (sub === 'job') return job(rest, io);
  if (sub === 'sandbox') return sandbox(rest, io);
  if (sub === 'verdict') return verdict(rest, io);
  throw new UsageError(`warden k8s takes job, sandbox or verdict${sub === undefined ? '' : `, not ${JSON.stringify(sub)}`} (see warden k8s --help).`);
}

const print = (io: CliIo, manifest: unknown, json: boolean) => io.out(json ? `${JSON.stringify(manifest, null, 2)}\n` : toYaml(manifest as Json));

/** A whole number option in [min, max]. */
function count(token: OptionToken & { kind: 'option' }, min: number, max: number): number {
  const text = token.value ?? '';
  const n = Number(text);
  if (!/^\d{1,9}$/.test(text) || n < min || n > max) throw new UsageError(`${token.rawName} takes a whole number from ${min} to ${max}, not ${JSON.stringify(text)}.`);
  return n;
}

/** --warden: the words that run warden in the image (no shell: split at spaces). */
function wardenWords(text: string): string[] {
  // eslint-disable-next-line no-control-regex -- refusing control characters is the point
  const words = /[\x00-\x1f\x7f]/.test(text) ? [] : text.split(' ').filter((w) => w !== '');
  if (words.length === 0) throw new UsageError(`--warden takes the command that runs warden in the image (e.g. /usr/local/bin/warden), not ${JSON.stringify(text)}.`);
  return words;
}

function imageOf(text: string | undefined): string {
  if (text === undefined) throw new UsageError('--image is required: the container image, with Node 20.19+ and warden installed.');
  // eslint-disable-next-line no-control-regex -- an image reference is one word
  if (text === '' || /[\s\x00-\x1f\x7f]/.test(text) || text.length > 1024) throw new UsageError(`--image takes an image reference such as registry.example.com/trainer:1.4, not ${JSON.stringify(text.slice(0, 80))}.`);
  return text;
}

/** Value options by name, and --json. */
const spec = (names: string[]): Record<string, OptionSpec> => ({ ...Object.fromEntries(names.map((name) => [name, { type: 'string' }])), json: { type: 'boolean' } });

const JOB_OPTIONS = spec(['image', 'name', 'namespace', 'container', 'limit', 'memory', 'indexed', 'parallelism', 'backoff-limit', 'oom-exit-code', 'deadline-grace', 'warden']);

function job(args: string[], io: CliIo): number {
  const { options, rest } = splitAtCommand(args, JOB_OPTIONS, 'k8s job');
  const values = new Map<string, OptionToken & { kind: 'option' }>();
  for (const token of options) if (token.kind === 'option') values.set(token.name, token);
  const text = (name: string) => values.get(name)?.value;
  if (rest.length === 0) throw new UsageError('No command given: warden k8s job --image IMAGE [options] -- COMMAND [ARGS...]');
  const limitText = text('limit');
  const limitMs = limitText === undefined ? 0 : durationOption('--limit', limitText);
  const indexed = values.has('indexed') ? count(values.get('indexed')!, 1, 100_000) : undefined;
  if (values.has('parallelism') && indexed === undefined) throw new UsageError('--parallelism goes with --indexed N (a Job of one completion runs one pod at a time).');
  const graceText = text('deadline-grace');
  const graceMs = graceText === undefined ? DEFAULT_DEADLINE_GRACE_S * 1000 : durationOption('--deadline-grace', graceText);
  if (graceText !== undefined && limitMs === 0) throw new UsageError('--deadline-grace goes with --limit: without a limit the pod has no deadline.');
  const options_: JobOptions = {
    argv: rest,
    image: imageOf(text('image')),
    name: text('name') !== undefined ? checkLabel("A Job's name", text('name')!) : jobNameFor(rest),
    ...(text('namespace') !== undefined ? { namespace: checkLabel('A namespace', text('namespace')!) } : {}),
    container: text('container') !== undefined ? checkLabel("A container's name", text('container')!) : 'task',
    ...(limitMs > 0 ? { limit: { text: limitText!, ms: limitMs } } : {}),
    ...(text('memory') !== undefined ? { memoryBytes: parseQuantity('--memory', text('memory')!) } : {}),
    ...(indexed !== undefined ? { indexed } : {}),
    ...(values.has('parallelism') ? { parallelism: count(values.get('parallelism')!, 1, indexed!) } : {}),
    backoffLimit: values.has('backoff-limit') ? count(values.get('backoff-limit')!, 0, 10_000) : 3,
    ...(text('oom-exit-code') !== undefined ? { oomExitCode: parseOomExitCode(text('oom-exit-code')!) } : {}),
    deadlineGraceS: Math.ceil(graceMs / 1000),
    warden: text('warden') !== undefined ? wardenWords(text('warden')!) : ['warden'],
  };
  print(io, jobManifest(options_), values.has('json'));
  return 0;
}

const SANDBOX_OPTIONS = spec(['image', 'name', 'namespace', 'container', 'memory', 'storage', 'warden']);

function sandbox(args: string[], io: CliIo): number {
  const values = new Map<string, string | undefined>();
  for (const token of tokensOf(args, SANDBOX_OPTIONS, 'k8s sandbox')) {
    if (token.kind === 'positional') throw new UsageError(`warden k8s sandbox takes no words (${JSON.stringify(token.value)}); see warden k8s sandbox --help.`);
    if (token.kind === 'option') values.set(token.name, token.value);
  }
  const storage = values.get('storage');
  const manifest = sandboxManifest({
    name: values.has('name') ? checkLabel("A Sandbox's name", values.get('name')!) : 'warden',
    ...(values.has('namespace') ? { namespace: checkLabel('A namespace', values.get('namespace')!) } : {}),
    image: imageOf(values.get('image')),
    container: values.has('container') ? checkLabel("A container's name", values.get('container')!) : 'warden',
    ...(values.has('memory') ? { memoryBytes: parseQuantity('--memory', values.get('memory')!) } : {}),
    storageBytes: storage === '0' ? null : parseQuantity('--storage', storage ?? '1Gi'),
    warden: values.has('warden') ? wardenWords(values.get('warden')!) : ['warden'],
  });
  print(io, manifest, values.has('json'));
  return 0;
}

/** All of stdin, at most MAX_INPUT_BYTES; a terminal is refused rather than waited on. */
async function readInput(io: CliIo): Promise<string> {
  if (io.readStdin) return io.readStdin();
  if (process.stdin.isTTY) throw new UsageError('warden k8s verdict reads the message from FILE or stdin: pipe kubectl get pod ... -o jsonpath=\'{..terminated.message}\' into it.');
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of process.stdin) {
    size += (chunk as Buffer).length;
    if (size > MAX_INPUT_BYTES) throw new UsageError(`The input is over ${MAX_INPUT_BYTES} bytes: no termination message is (Kubernetes keeps 4,096).`);
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function readMessageFile(path: string): string {
  try {
    const text = readFileSync(path);
    if (text.length > MAX_INPUT_BYTES) throw new UsageError(`${path} is over ${MAX_INPUT_BYTES} bytes: no termination message is (Kubernetes keeps 4,096).`);
    return text.toString('utf8');
  } catch (error) {
    if (error instanceof UsageError) throw error;
    const code = (error as NodeJS.ErrnoException).code;
    throw new UsageError(`Cannot read ${path}: ${code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'it is a directory' : code === 'EACCES' ? 'permission denied' : (code ?? 'unreadable')}.`);
  }
}

async function verdict(args: string[], io: CliIo): Promise<number> {
  const words: string[] = [];
  let json = false;
  for (const token of tokensOf(args, { json: { type: 'boolean' } }, 'k8s verdict')) {
    if (token.kind === 'positional') words.push(token.value);
    else if (token.kind === 'option') json = true;
  }
  if (words.length === 0 || words.length > 2) throw new UsageError('warden k8s verdict takes NAMESPACE/POD[/CONTAINER] and at most one FILE (see warden k8s verdict --help).');
  const ref = parsePodRef(words[0]!);
  const raw = words[1] !== undefined ? readMessageFile(words[1]) : await readInput(io);
  const result = runFromMessage(parseMessage(raw), ref, raw, Date.now());
  const { recordImported } = await import('./record');
  const recorded = recordImported(result, podHost(ref));
  if (json) io.out(`${JSON.stringify(result, null, 2)}\n`);
  const how = result.signal !== null ? `signal ${result.signal}` : result.exitCode !== null ? `exit ${result.exitCode}` : 'no exit status';
  io.err(`warden: ${recorded === 'already' ? 'already recorded' : 'recorded'}: run ${result.id} of ${podHost(ref)}, ${result.verdict}, ${how}; see warden show ${result.id}\n`);
  return 0;
}
