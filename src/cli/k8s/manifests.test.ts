// `warden k8s job` and `warden k8s sandbox`: the printed manifests against
// golden files (WARDEN_UPDATE_GOLDEN=1 rewrites them), read back by a real
// YAML parser into @kubernetes/client-node's V1Job (the builder is typed
// against it at compile time); the container's command read back by
// warden run's own parser; the pieces (names, sizes, the failure rules) as
// tables; and every bad option as one line and 125.

import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { V1Job } from '@kubernetes/client-node';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { main } from '../main';
import { parseAnyRunArgs, isPythonCommand } from '../args';
import { parseMemory } from '../../main/supervisor/cgroup';
import { DEFAULT_DEADLINE_GRACE_S, failureRules, jobManifest, MEMORY_HEADROOM_BYTES, wardenCommand } from './job';
import { checkLabel, checkPodName, jobNameFor, parsePodRef, podRefText } from './names';
import { mebibytes, parseQuantity, wardenMemory } from './quantity';
import { sandboxManifest } from './sandbox';

const GOLDEN = join(__dirname, 'golden');

async function warden(args: string[]): Promise<{ status: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const status = await main(args, { out: (t) => void (out += t), err: (t) => void (err += t), onSignal: () => () => undefined });
  return { status, out, err };
}

/** The output against golden/NAME; rewritten instead when WARDEN_UPDATE_GOLDEN=1. */
function golden(name: string, text: string): void {
  const path = join(GOLDEN, name);
  if (process.env.WARDEN_UPDATE_GOLDEN === '1') writeFileSync(path, text);
  expect(text).toBe(readFileSync(path, 'utf8'));
}

const JOB = ['k8s', 'job', '--image', 'registry.example.com/trainer:1.4', '--limit', '30m', '--memory', '2Gi'];

describe('warden k8s job', () => {
  it('prints the Job of the golden file, which reads back as a V1Job doing what it says', async () => {
    const r = await warden([...JOB, '--', 'python3', 'train.py', '--epochs', '3']);
    expect(r.err).toBe('');
    expect(r.status).toBe(0);
    golden('job.yaml', r.out);
    const job = parse(r.out) as V1Job;
    expect(job).toEqual(jobManifest({ argv: ['python3', 'train.py', '--epochs', '3'], image: 'registry.example.com/trainer:1.4', name: 'warden-python3', container: 'task', limit: { text: '30m', ms: 1_800_000 }, memoryBytes: 2 * 1024 ** 3, backoffLimit: 3, deadlineGraceS: DEFAULT_DEADLINE_GRACE_S, warden: ['warden'] }));
    const spec = job.spec!;
    const pod = spec.template.spec!;
    const container = pod.containers[0]!;
    expect(pod.restartPolicy).toBe('Never');
    expect(container.terminationMessagePolicy).toBe('FallbackToLogsOnError');
    // Kubernetes' deadline comes after Warden's own limit and its stop: never before.
    expect(pod.activeDeadlineSeconds).toBe(1800 + DEFAULT_DEADLINE_GRACE_S);
    // The container's memory is above Warden's, so the OOM kill happens in Warden's cgroup.
    expect(parseQuantity('memory', container.resources!.limits!.memory!)).toBe(2 * 1024 ** 3 + MEMORY_HEADROOM_BYTES);
    expect(container.resources!.requests).toEqual(container.resources!.limits);
    // The command is what warden run reads as intended.
    expect(container.command!.slice(0, 2)).toEqual(['warden', 'run']);
    const run = parseAnyRunArgs(container.command!.slice(2));
    if (isPythonCommand(run)) throw new Error('a command run was meant');
    expect(run).toMatchObject({ exitCodes: 'k8s', terminationLog: '/dev/termination-log', request: { argv: ['python3', 'train.py', '--epochs', '3'], limitMs: 1_800_000 } });
    expect(parseMemory(run.request.memory!)).toBe(2 * 1024 ** 3);
    expect(spec.podFailurePolicy!.rules.map((rule) => [rule.action, rule.onExitCodes?.values ?? rule.onPodConditions])).toEqual([
      ['FailJob', [124, 125, 126, 127]],
      ['Count', [137]],
      ['Ignore', [{ type: 'DisruptionTarget', status: 'True' }]],
    ]);
  });

  it('--indexed: FailIndex, backoffLimitPerIndex, and the OOM code of --oom-exit-code', async () => {
    const r = await warden([...JOB, '--indexed', '8', '--parallelism', '2', '--backoff-limit', '1', '--oom-exit-code', '75', '--name', 'shards', '--namespace', 'ml', '--container', 'worker', '--', 'bash', '-c', 'python3 shard.py "$JOB_COMPLETION_INDEX"']);
    expect(r.status).toBe(0);
    golden('job-indexed.yaml', r.out);
    const job = parse(r.out) as V1Job;
    expect(job.metadata).toEqual({ name: 'shards', namespace: 'ml' });
    expect(job.spec).toMatchObject({ completionMode: 'Indexed', completions: 8, parallelism: 2, backoffLimitPerIndex: 1 });
    expect(job.spec).not.toHaveProperty('backoffLimit');
    expect(job.spec!.podFailurePolicy!.rules.map((rule) => [rule.action, rule.onExitCodes?.containerName, rule.onExitCodes?.values])).toEqual([
      ['FailIndex', 'worker', [124, 125, 126, 127]],
      ['Count', 'worker', [75]],
      ['Ignore', undefined, undefined],
    ]);
    expect(job.spec!.template.spec!.containers[0]!.command).toEqual(['warden', 'run', '--exit-codes', 'k8s', '--oom-exit-code', '75', '--limit', '30m', '--memory', '2048MiB', '--termination-log', '--', 'bash', '-c', 'python3 shard.py "$JOB_COMPLETION_INDEX"']);
  });

  it('without --limit or --memory: no deadline and no resources; --json is the same object', async () => {
    const r = await warden(['k8s', 'job', '--image', 'img', '--warden', '/opt/w/bin/warden', '--', './task.sh']);
    const job = parse(r.out) as V1Job;
    const pod = job.spec!.template.spec!;
    expect(pod).not.toHaveProperty('activeDeadlineSeconds');
    expect(pod.containers[0]).not.toHaveProperty('resources');
    expect(pod.containers[0]!.command).toEqual(['/opt/w/bin/warden', 'run', '--exit-codes', 'k8s', '--termination-log', '--', './task.sh']);
    expect(job.metadata!.name).toBe('warden-task-sh');
    const json = await warden(['k8s', 'job', '--json', '--image', 'img', '--warden', '/opt/w/bin/warden', '--', './task.sh']);
    expect(JSON.parse(json.out)).toEqual(job);
  });

  it('--indexed alone runs every index at once; the counts take their bounds', async () => {
    const spec = async (args: string[]) => (parse((await warden(['k8s', 'job', '--image', 'img', ...args, '--', 'x'])).out) as V1Job).spec!;
    expect(await spec(['--indexed', '4'])).toMatchObject({ completions: 4, parallelism: 4, backoffLimitPerIndex: 3 });
    expect(await spec(['--indexed', '100000', '--parallelism', '100000'])).toMatchObject({ completions: 100_000, parallelism: 100_000 });
    expect(await spec(['--indexed', '2', '--parallelism', '1'])).toMatchObject({ parallelism: 1 });
    expect(await spec(['--backoff-limit', '0'])).toMatchObject({ backoffLimit: 0 });
    expect(await spec(['--backoff-limit', '10000'])).toMatchObject({ backoffLimit: 10_000 });
    expect(await spec([])).not.toHaveProperty('completionMode');
    for (const bad of [['--indexed', '100001'], ['--backoff-limit', '10001'], ['--backoff-limit', '-1'], ['--indexed', '2', '--parallelism', '0'], ['--indexed', '1.5']]) {
      const r = await warden(['k8s', 'job', '--image', 'img', ...bad, '--', 'x']);
      expect(r.status, bad.join(' ')).toBe(125);
      expect(r.err, bad.join(' ')).toMatch(/takes a whole number from/);
    }
  });

  it('--deadline-grace moves the deadline; a limit that is not whole seconds rounds up', async () => {
    const r = await warden(['k8s', 'job', '--image', 'img', '--limit', '1500ms', '--deadline-grace', '30s', '--', 'x']);
    expect((parse(r.out) as V1Job).spec!.template.spec!.activeDeadlineSeconds).toBe(2 + 30);
  });

  it('refuses what it cannot mean, in one line with 125', async () => {
    const cases: [string[], RegExp][] = [
      [['k8s', 'job', '--', 'x'], /^warden: --image is required/],
      [['k8s', 'job', '--image', 'img'], /^warden: No command given: warden k8s job/],
      [['k8s', 'job', '--image', 'a b', '--', 'x'], /^warden: --image takes an image reference/],
      [['k8s', 'job', '--image', 'img', '--limit', 'soon', '--', 'x'], /^warden: --limit takes a duration/],
      [['k8s', 'job', '--image', 'img', '--memory', '2GB', '--', 'x'], /^warden: --memory takes a size as Kubernetes writes it/],
      [['k8s', 'job', '--image', 'img', '--memory', '512Ki', '--', 'x'], /^warden: --memory must be at least 1Mi/],
      [['k8s', 'job', '--image', 'img', '--indexed', '0', '--', 'x'], /^warden: --indexed takes a whole number from 1 to 100000/],
      [['k8s', 'job', '--image', 'img', '--indexed', '2', '--parallelism', '3', '--', 'x'], /^warden: --parallelism takes a whole number from 1 to 2/],
      [['k8s', 'job', '--image', 'img', '--parallelism', '3', '--', 'x'], /^warden: --parallelism goes with --indexed/],
      [['k8s', 'job', '--image', 'img', '--deadline-grace', '1m', '--', 'x'], /^warden: --deadline-grace goes with --limit/],
      [['k8s', 'job', '--image', 'img', '--oom-exit-code', '124', '--', 'x'], /^warden: --oom-exit-code 124 would read as timed out/],
      [['k8s', 'job', '--image', 'img', '--name', 'Train', '--', 'x'], /^warden: A Job's name is 1 to 63 lower-case/],
      [['k8s', 'job', '--image', 'img', '--namespace', 'a_b', '--', 'x'], /^warden: A namespace is 1 to 63/],
      [['k8s', 'job', '--image', 'img', '--warden', ' ', '--', 'x'], /^warden: --warden takes the command/],
      [['k8s', 'job', '--image', 'img', '--bogus', '--', 'x'], /^warden: Unknown option --bogus for warden k8s job/],
      [['k8s', 'nope'], /^warden: warden k8s takes job, sandbox or verdict, not "nope"/],
      [['k8s'], /^warden: warden k8s takes job, sandbox or verdict \(see/],
      [['k8s', 'sandbox', '--image', 'img', 'extra'], /^warden: warden k8s sandbox takes no words/],
      [['k8s', 'sandbox', '--image', 'img', '--storage', '-1'], /^warden: --storage takes a size/],
    ];
    for (const [args, error] of cases) {
      const r = await warden(args);
      expect(r.status, args.join(' ')).toBe(125);
      expect(r.out, args.join(' ')).toBe('');
      expect(r.err, args.join(' ')).toMatch(error);
      expect(r.err.trim().split('\n'), args.join(' ')).toHaveLength(1);
    }
  });
});

describe('warden k8s sandbox', () => {
  it('prints the Sandbox of the golden file: warden serve, its history on a claim', async () => {
    const r = await warden(['k8s', 'sandbox', '--image', 'registry.example.com/agent:2', '--namespace', 'agents', '--memory', '4Gi']);
    expect(r.status).toBe(0);
    golden('sandbox.yaml', r.out);
    const sandbox = parse(r.out) as ReturnType<typeof sandboxManifest>;
    expect(sandbox).toMatchObject({ apiVersion: 'agents.x-k8s.io/v1alpha1', kind: 'Sandbox', metadata: { name: 'warden', namespace: 'agents' } });
    const container = sandbox.spec.podTemplate.spec.containers[0]!;
    expect(container.command).toEqual(['warden', 'serve', '--no-tcp']);
    expect(container.resources).toEqual({ limits: { memory: '4096Mi' }, requests: { memory: '4096Mi' } });
    expect(sandbox.spec.volumeClaimTemplates).toEqual([{ metadata: { name: 'warden-state' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1024Mi' } } } }]);
    expect(sandbox.spec.podTemplate.spec).not.toHaveProperty('volumes');
  });

  it('--storage 0: an emptyDir instead of a claim', async () => {
    const r = await warden(['k8s', 'sandbox', '--image', 'img', '--storage', '0', '--name', 'box', '--container', 'c']);
    const sandbox = parse(r.out) as ReturnType<typeof sandboxManifest>;
    expect(sandbox.spec).not.toHaveProperty('volumeClaimTemplates');
    expect(sandbox.spec.podTemplate.spec.volumes).toEqual([{ name: 'warden-state', emptyDir: {} }]);
    expect(sandbox.metadata.name).toBe('box');
    expect(sandbox.spec.podTemplate.spec.containers[0]!.name).toBe('c');
  });
});

describe('the pieces', () => {
  it('failureRules: FailJob or FailIndex first, then Count on the OOM code, then Ignore disruptions', () => {
    expect(failureRules({ container: 'task' })).toEqual([
      { action: 'FailJob', onExitCodes: { containerName: 'task', operator: 'In', values: [124, 125, 126, 127] } },
      { action: 'Count', onExitCodes: { containerName: 'task', operator: 'In', values: [137] } },
      { action: 'Ignore', onPodConditions: [{ type: 'DisruptionTarget', status: 'True' }] },
    ]);
    expect(failureRules({ container: 'c', indexed: 2, oomExitCode: 75 }).map((r) => [r.action, r.onExitCodes?.values])).toEqual([['FailIndex', [124, 125, 126, 127]], ['Count', [75]], ['Ignore', undefined]]);
  });

  it('wardenCommand: flags only when given, the command after --', () => {
    expect(wardenCommand({ argv: ['a', '--b'], warden: ['w'] })).toEqual(['w', 'run', '--exit-codes', 'k8s', '--termination-log', '--', 'a', '--b']);
    expect(wardenCommand({ argv: ['a'], warden: ['node', 'w.mjs'], oomExitCode: 75, limit: { text: '1h', ms: 3_600_000 }, memoryBytes: 1024 ** 2 + 1 })).toEqual(['node', 'w.mjs', 'run', '--exit-codes', 'k8s', '--oom-exit-code', '75', '--limit', '1h', '--memory', '1048577', '--termination-log', '--', 'a']);
  });

  it('parseQuantity: Kubernetes units, 1024s and 1000s, fractions rounded up', () => {
    const rows: [string, number][] = [
      ['1Mi', 1024 ** 2], ['2Gi', 2 * 1024 ** 3], ['1Ti', 1024 ** 4], ['1024Ki', 1024 ** 2], ['1.5Gi', 1.5 * 1024 ** 3],
      ['2M', 2e6], ['2G', 2e9], ['1T', 1e12], ['2000k', 2e6], ['1048576', 1024 ** 2], ['0.1Mi', -1],
    ];
    for (const [text, bytes] of rows) {
      if (bytes < 0) expect(() => parseQuantity('--memory', text), text).toThrow(/at least 1Mi/);
      else expect(parseQuantity('--memory', text), text).toBe(bytes);
    }
    for (const bad of ['', '2GB', '2gi', 'Gi', '-1Mi', '1e9', '1.5', '2 Gi', '0x10']) expect(() => parseQuantity('--memory', bad), bad).toThrow(/takes a size as Kubernetes writes it|at least 1Mi/);
    expect(() => parseQuantity('--memory', '1048575')).toThrow(/at least 1Mi/);
  });

  it('wardenMemory and mebibytes: exact MiB for warden run, Mi rounded up for the container', () => {
    expect(wardenMemory(2 * 1024 ** 3)).toBe('2048MiB');
    expect(wardenMemory(2e9)).toBe('2000000000');
    expect(parseMemory(wardenMemory(2e9))).toBe(2e9);
    expect(mebibytes(1024 ** 2)).toBe('1Mi');
    expect(mebibytes(1024 ** 2 + 1)).toBe('2Mi');
  });

  it('names: labels, pod names, NS/POD[/CONTAINER], a Job name from the program', () => {
    for (const good of ['a', 'ml', 'train-0', 'a'.repeat(63), '0x']) expect(checkLabel('x', good)).toBe(good);
    for (const bad of ['', 'A', '-a', 'a-', 'a_b', 'a.b', 'a'.repeat(64), 'é']) expect(() => checkLabel('A namespace', bad), bad).toThrow(/^A namespace is 1 to 63/);
    for (const good of ['train-step-abcde', 'a.b.c', `${'a'.repeat(63)}.${'b'.repeat(63)}`]) expect(checkPodName(good)).toBe(good);
    for (const bad of ['', 'A', 'a..b', '.a', 'a.', 'a/b', `${'a.'.repeat(127)}a`]) expect(() => checkPodName(bad), bad).toThrow(/^A pod's name/);
    expect(parsePodRef('ml/train-0')).toEqual({ namespace: 'ml', pod: 'train-0' });
    expect(parsePodRef('ml/train-0/task')).toEqual({ namespace: 'ml', pod: 'train-0', container: 'task' });
    for (const bad of ['ml', 'ml/', '/p', 'a/b/c/d', 'ML/p', 'ml/p/T']) expect(() => parsePodRef(bad), bad).toThrow();
    expect(podRefText({ namespace: 'n', pod: 'p' })).toBe('n/p');
    expect(podRefText({ namespace: 'n', pod: 'p', container: 'c' })).toBe('n/p/c');
    const rows: [string[], string][] = [
      [['python3', 'x'], 'warden-python3'], [['/usr/bin/Train.PY'], 'warden-train-py'], [['./--x--'], 'warden-x'], [['日本'], 'warden-job'], [[], 'warden-job'], [['a'.repeat(80)], `warden-${'a'.repeat(56)}`],
      [[`${'a'.repeat(55)}-b`], `warden-${'a'.repeat(55)}`],
    ];
    for (const [argv, name] of rows) expect(jobNameFor(argv), argv.join(' ')).toBe(name);
    for (const [argv] of rows) expect(() => checkLabel('x', jobNameFor(argv))).not.toThrow();
  });
});
