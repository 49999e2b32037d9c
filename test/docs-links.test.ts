// Every link between README.md and docs/*.md leads somewhere: the file
// exists, and a #fragment names a heading of it, as GitHub makes anchors.
// The manual was cut into files; a link left aiming at the old place fails here.

import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(__dirname, '..');

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens. */
function slug(heading: string): string {
  return heading
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

/** The anchors of a markdown file's headings (outside fences); a repeated one gets -1, -2, ... */
function anchors(text: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  let fence = false;
  for (const line of text.split('\n')) {
    if (line.startsWith('```')) fence = !fence;
    const m = fence ? null : /^#{1,6} (.+)$/.exec(line);
    if (!m) continue;
    const base = slug(m[1]!.trim());
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  return out;
}

/** The relative links of a markdown file (outside fences and inline code), with their lines. */
function links(text: string): { line: number; target: string }[] {
  const out: { line: number; target: string }[] = [];
  let fence = false;
  text.split('\n').forEach((line, i) => {
    if (line.startsWith('```')) fence = !fence;
    if (fence) return;
    for (const m of line.replace(/`[^`]*`/g, '').matchAll(/\]\(([^)\s]+)\)/g)) {
      if (!/^[a-z]+:/.test(m[1]!)) out.push({ line: i + 1, target: m[1]! });
    }
  });
  return out;
}

describe('slug and anchors', () => {
  it.each([
    ['The host and its API', 'the-host-and-its-api'],
    ['Plugging `warden` into an agent harness', 'plugging-warden-into-an-agent-harness'],
    ['The host: one supervisor for agents, the CLI, the app and a browser', 'the-host-one-supervisor-for-agents-the-cli-the-app-and-a-browser'],
    ['Dev servers, databases, watchers: services that never end', 'dev-servers-databases-watchers-services-that-never-end'],
    ['Exit status and verdicts', 'exit-status-and-verdicts'],
  ])('%s', (heading, anchor) => {
    expect(slug(heading)).toBe(anchor);
  });

  it('numbers a repeated heading and skips fenced lines', () => {
    expect([...anchors('# A\n## B\n```\n# not one\n```\n## B\n')]).toEqual(['a', 'b', 'b-1']);
  });

  it('finds relative links only, outside code', () => {
    expect(links('[a](x.md#y) [b](https://e.org) `[c](no.md)`\n```\n[d](no.md)\n```\n[e](#z)')).toEqual([
      { line: 1, target: 'x.md#y' },
      { line: 5, target: '#z' },
    ]);
  });
});

/** Paths into this repository the text names: `src/...`, `scripts/...`, `.ci/run`; a glob is left out. */
function repoPaths(text: string): string[] {
  const found = text.matchAll(/(?<![\w./-])(?:src|scripts|test|e2e|bench|runtime|docs|integrations|\.ci)\/[\w./*-]+/g);
  return [...new Set([...found].map((m) => m[0].replace(/[.,;:]+$/, '')).filter((path) => !path.includes('*')))];
}

describe('repoPaths', () => {
  it.each([
    ['the handler (`src/main/protocol.ts`), with', ['src/main/protocol.ts']],
    ['see .ci/run. And bench/README.md, e2e/.', ['.ci/run', 'bench/README.md', 'e2e/']],
    ['any src/main/*.ts, or host/server.ts, or out/cli/dist', []],
    ['docs/cli.md docs/cli.md', ['docs/cli.md']],
  ])('%s', (text, paths) => {
    expect(repoPaths(text)).toEqual(paths);
  });
});

describe('links in README.md and docs/', () => {
  const files = ['README.md', ...readdirSync(join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).map((f) => join('docs', f))];

  it('lead to a file that exists and a heading it has', () => {
    const wrong: string[] = [];
    let checked = 0;
    for (const file of files) {
      for (const { line, target } of links(readFileSync(join(ROOT, file), 'utf8'))) {
        checked++;
        const [path, fragment] = target.split('#') as [string, string | undefined];
        const to = path === '' ? join(ROOT, file) : resolve(dirname(join(ROOT, file)), path);
        if (!existsSync(to)) {
          wrong.push(`${file}:${line}: ${target}: no such file`);
          continue;
        }
        if (fragment !== undefined && to.endsWith('.md') && !anchors(readFileSync(to, 'utf8')).has(fragment)) {
          wrong.push(`${file}:${line}: ${target}: no heading #${fragment} in ${relative(ROOT, to)}`);
        }
      }
    }
    expect(checked).toBeGreaterThan(30);
    expect(wrong).toEqual([]);
  });

  it('name only files and folders of this repository that exist', () => {
    const wrong: string[] = [];
    let checked = 0;
    for (const file of files) {
      for (const path of repoPaths(readFileSync(join(ROOT, file), 'utf8'))) {
        checked++;
        if (!existsSync(join(ROOT, path))) wrong.push(`${file}: ${path}: no such file or folder`);
      }
    }
    expect(checked).toBeGreaterThan(30);
    expect(wrong).toEqual([]);
  });
});
