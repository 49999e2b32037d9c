// What bash really starts for a command line: `bash -c LINE` with xtrace on
// (set through BASH_ENV, so every bash the line starts traces too) into a
// pipe of its own, in a scratch directory whose PATH holds only shims that
// do nothing, so no program the line names runs for real: only bash and its
// builtins do. Each record is one simple command as bash ran it, its words
// after expansion. The oracle of the hook's differential test.

import { spawn } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Programs the corpus names: each a shim that exits 0 (shells: bash itself, so what they run is traced too). */
const SHIMMED = ['rm', 'ls', 'cat', 'git', 'curl', 'wc', 'grep', 'sleep', 'npm', 'node', 'python3', 'xargs', 'env', 'sudo', 'timeout', 'nice', 'nohup', 'stdbuf', 'find', 'tee', 'touch', 'mkdir', 'cp', 'mv', 'chmod', 'head', 'tail', 'sort', 'id', 'whoami', 'date', 'make', 'doas', 'setsid', 'watch', 'r', 'm', 'x'];
const SHELLS = ['sh', 'bash', 'dash', 'zsh'];

const RECORD = '\x1e';

export interface Tracer {
  /** The simple commands bash ran for line, each as its words; `timedOut` when it had to be killed. */
  trace(line: string): Promise<{ commands: string[][]; timedOut: boolean }>;
  close(): void;
}

export function makeTracer(): Tracer {
  const root = mkdtempSync(join(tmpdir(), 'whook-trace-'));
  const bin = join(root, 'bin');
  mkdirSync(bin);
  for (const name of SHIMMED) {
    writeFileSync(join(bin, name), '#!/bin/sh\nexit 0\n');
    chmodSync(join(bin, name), 0o755);
  }
  for (const name of SHELLS) {
    writeFileSync(join(bin, name), '#!/bin/sh\nexec /bin/bash "$@"\n');
    chmodSync(join(bin, name), 0o755);
  }
  const env = join(root, 'trace-env.sh');
  writeFileSync(env, `BASH_XTRACEFD=9\nPS4=$'${RECORD}'\nset -x\n`);
  let n = 0;
  return {
    trace(line: string) {
      const cwd = join(root, `run-${n++}`);
      mkdirSync(cwd);
      return new Promise((resolve) => {
        const child = spawn('/bin/bash', ['-c', line], {
          cwd,
          detached: true,
          env: { PATH: bin, BASH_ENV: env, HOME: cwd, LANG: 'C.UTF-8' },
          stdio: ['ignore', 'ignore', 'ignore', 'ignore', 'ignore', 'ignore', 'ignore', 'ignore', 'ignore', 'pipe'],
        });
        const chunks: Buffer[] = [];
        let timedOut = false;
        // A line that loops or waits is killed, group and all; what it traced so far still counts.
        const timer = setTimeout(() => {
          timedOut = true;
          try {
            process.kill(-child.pid!, 'SIGKILL');
          } catch {
            // Gone.
          }
        }, 10_000);
        const pipe = (child.stdio as unknown as NodeJS.ReadableStream[])[9]!;
        pipe.on('data', (chunk: Buffer) => chunks.push(chunk));
        // The end of the pipe, not the exit: a background job of the line traces after bash exits.
        pipe.on('end', () => {
          clearTimeout(timer);
          resolve({ commands: parseXtrace(Buffer.concat(chunks).toString('utf8')), timedOut });
        });
      });
    },
    close() {
      rmSync(root, { recursive: true, force: true });
    },
  };
}

/** Records of bash's xtrace with PS4 = RECORD: each a line of words as bash quotes them. */
export function parseXtrace(text: string): string[][] {
  return text
    .split(new RegExp(`${RECORD}+`))
    .slice(1)
    .map((record) => xtraceWords(record.endsWith('\n') ? record.slice(0, -1) : record));
}

/** The words of one xtrace record: bash writes 'single quoted', $'ANSI-C quoted' and backslash-escaped words separated by blanks. */
export function xtraceWords(record: string): string[] {
  const words: string[] = [];
  let word = '';
  let inWord = false;
  for (let i = 0; i < record.length; i++) {
    const c = record[i]!;
    if (c === ' ') {
      if (inWord) words.push(word);
      word = '';
      inWord = false;
      continue;
    }
    inWord = true;
    if (c === "'") {
      const end = record.indexOf("'", i + 1);
      word += record.slice(i + 1, end < 0 ? undefined : end);
      i = end < 0 ? record.length : end;
    } else if (c === '$' && record[i + 1] === "'") {
      i += 2;
      for (; i < record.length && record[i] !== "'"; i++) {
        if (record[i] === '\\') {
          const e = record[++i];
          const simple: Record<string, string> = { n: '\n', t: '\t', r: '\r', a: '\x07', b: '\b', e: '\x1b', E: '\x1b', f: '\f', v: '\v', '\\': '\\', "'": "'", '"': '"' };
          if (e !== undefined && e in simple) word += simple[e];
          else if (e !== undefined && /[0-7]/.test(e)) {
            const digits = /^[0-7]{1,3}/.exec(record.slice(i))![0];
            word += String.fromCharCode(parseInt(digits, 8));
            i += digits.length - 1;
          } else if (e === 'x') {
            const digits = /^[0-9a-fA-F]{1,2}/.exec(record.slice(i + 1))?.[0] ?? '';
            word += String.fromCharCode(parseInt(digits || '0', 16));
            i += digits.length;
          } else word += `\\${e ?? ''}`;
        } else word += record[i];
      }
    } else if (c === '\\' && i + 1 < record.length) {
      word += record[++i];
    } else word += c;
  }
  if (inWord) words.push(word);
  return words;
}
