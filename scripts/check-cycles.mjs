// Fails when source files import each other in a circle, or when folders do
// (docs/architecture.md, "Layout"). ESLint's no-restricted-imports rules in
// eslint.config.js say which folder may import which; they cannot see a
// circle, so `npm run lint` runs this too. Type-only imports count: a circle
// of types is still two modules that cannot be understood apart.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const src = join(root, 'src');

function sources(dir) {
  const out = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...sources(path));
    else if (/\.(ts|tsx)$/.test(name) && !/\.d\.ts$/.test(name)) out.push(path);
  }
  return out;
}

function resolveImport(from, spec) {
  if (!spec.startsWith('.')) return null;
  const base = resolve(dirname(from), spec);
  for (const candidate of [base, `${base}.ts`, `${base}.tsx`, join(base, 'index.ts'), join(base, 'index.tsx')]) {
    if (existsSync(candidate) && statSync(candidate).isFile()) return candidate;
  }
  return null;
}

/** The layer a file belongs to: src/main/<part> for main's parts (app, host, store, supervisor), else src/<folder>. */
export function folderOf(file) {
  const parts = relative(src, file).split('/');
  if (parts.length === 1) return '.';
  if (parts[0] === 'main' && parts.length > 2) return `main/${parts[1]}`;
  return parts[0];
}

export function importGraph(files = sources(src)) {
  const graph = new Map();
  for (const file of files) {
    const info = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
    const targets = new Set();
    for (const ref of info.importedFiles) {
      const target = resolveImport(file, ref.fileName);
      if (target && target !== file) targets.add(target);
    }
    graph.set(file, targets);
  }
  return graph;
}

/** Strongly connected components with more than one member (Tarjan). */
export function circles(graph) {
  let index = 0;
  const stack = [];
  const info = new Map();
  const found = [];
  const visit = (node) => {
    info.set(node, { index, low: index, onStack: true });
    index += 1;
    stack.push(node);
    for (const next of graph.get(node) ?? []) {
      if (!info.has(next)) {
        visit(next);
        info.get(node).low = Math.min(info.get(node).low, info.get(next).low);
      } else if (info.get(next).onStack) {
        info.get(node).low = Math.min(info.get(node).low, info.get(next).index);
      }
    }
    if (info.get(node).low === info.get(node).index) {
      const component = [];
      let member;
      do {
        member = stack.pop();
        info.get(member).onStack = false;
        component.push(member);
      } while (member !== node);
      if (component.length > 1) found.push(component.sort());
    }
  };
  for (const node of graph.keys()) if (!info.has(node)) visit(node);
  return found;
}

/** Tests and their kits may reach up a layer (a store test drives a real host), so folders are judged by the code that ships. */
export const isTestCode = (file) => /\.test\.tsx?$|testkit/.test(file);

export function folderGraph(graph) {
  const folders = new Map();
  const why = new Map();
  for (const [file, targets] of graph) {
    if (isTestCode(file)) continue;
    const from = folderOf(file);
    if (!folders.has(from)) folders.set(from, new Set());
    for (const target of targets) {
      if (isTestCode(target)) continue;
      const to = folderOf(target);
      if (to === from) continue;
      folders.get(from).add(to);
      const key = `${from} -> ${to}`;
      if (!why.has(key)) why.set(key, `${relative(root, file)} imports ${relative(root, target)}`);
    }
  }
  return { folders, why };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const graph = importGraph();
  const problems = [];
  for (const circle of circles(graph)) problems.push(`files import each other in a circle: ${circle.map((f) => relative(root, f)).join(', ')}`);
  const { folders, why } = folderGraph(graph);
  for (const circle of circles(folders)) {
    const edges = [];
    for (const a of circle) for (const b of circle) if (folders.get(a)?.has(b)) edges.push(`  ${why.get(`${a} -> ${b}`)}`);
    problems.push(`folders import each other in a circle: ${circle.join(', ')}\n${edges.join('\n')}`);
  }
  for (const problem of problems) process.stderr.write(`check-cycles: ${problem}\n`);
  if (problems.length > 0) process.exit(1);
  process.stdout.write(`check-cycles: ${graph.size} files, no circles between files or folders\n`);
}
