// A harness's own permission rules, applied to the ORIGINAL command before
// the hook rewrites it: the harness checks its rules against the rewritten
// `warden run ...` line, where a rule such as Bash(npm test:*) no longer
// matches, and a hook that answers "allow" skips the rules altogether. So the
// hook answers with the decision the user's rules give the original, and
// "ask" whenever it cannot tell.
//
// Claude Code: permissions.allow / ask / deny from the settings it reads
// (managed, user, project, local) and --allowedTools / --disallowedTools on
// its command line; deny, then ask, then allow, the first match wins. Rules
// are Bash, Bash(*), Bash(prefix:*), Bash(exact) and Bash(glob with *). A
// compound command is allowed only when every simple command in it is.
// Deny and ask are matched generously (leading VAR=value words and wrappers
// such as sudo, env, timeout or nice stripped; a rule's literal text anywhere
// in the line counts as "cannot tell"), allow strictly.

import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { splitCommand, wordsOf } from './shell';

export type Decision = 'allow' | 'ask' | 'deny';

export interface RuleSet {
  allow: string[];
  ask: string[];
  deny: string[];
  /** A settings file that exists but could not be read: its rules are unknown. */
  unreadable: string[];
  defaultMode?: string;
  /** Claude Code's own sandbox (settings sandbox.enabled) is on for Bash commands. */
  sandboxed?: boolean;
}

export function emptyRules(): RuleSet {
  return { allow: [], ask: [], deny: [], unreadable: [] };
}

function readJson(path: string, into: RuleSet): unknown {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') into.unreadable.push(path);
    return undefined;
  }
  try {
    return JSON.parse(text);
  } catch {
    into.unreadable.push(path);
    return undefined;
  }
}

function addSettings(path: string, into: RuleSet): void {
  const settings = readJson(path, into) as { permissions?: { allow?: unknown; ask?: unknown; deny?: unknown; defaultMode?: unknown }; sandbox?: { enabled?: unknown } } | undefined;
  if (typeof settings?.sandbox?.enabled === 'boolean') into.sandboxed = settings.sandbox.enabled;
  const permissions = settings?.permissions;
  if (!permissions || typeof permissions !== 'object') return;
  for (const kind of ['allow', 'ask', 'deny'] as const) {
    const list = permissions[kind];
    if (Array.isArray(list)) for (const rule of list) if (typeof rule === 'string') into[kind].push(rule);
  }
  if (typeof permissions.defaultMode === 'string') into.defaultMode = permissions.defaultMode;
}

/** Values of a repeated tool-list flag on a command line: --allowedTools "Bash(git:*)" Read, or a comma-separated list. */
function flagValues(argv: string[], names: string[]): string[] {
  const values: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? '';
    const eq = arg.indexOf('=');
    const name = eq > 0 ? arg.slice(0, eq) : arg;
    if (!names.includes(name)) continue;
    const raw = eq > 0 ? [arg.slice(eq + 1)] : [];
    if (eq < 0) while (i + 1 < argv.length && !(argv[i + 1] ?? '-').startsWith('-')) raw.push(argv[++i] ?? '');
    for (const value of raw) values.push(...splitToolList(value));
  }
  return values;
}

/** "Bash(git log:*), Read Edit" -> each rule; separators inside parentheses belong to the rule. */
function splitToolList(text: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let current = '';
  for (const c of text) {
    if (c === '(') depth++;
    if (c === ')') depth = Math.max(0, depth - 1);
    if (depth === 0 && (c === ',' || /\s/.test(c))) {
      if (current.trim()) out.push(current.trim());
      current = '';
      continue;
    }
    current += c;
  }
  if (current.trim()) out.push(current.trim());
  return out;
}

export interface ClaudeContext {
  /** ~/.claude, or $CLAUDE_CONFIG_DIR. */
  configDir: string;
  /** The project's root ($CLAUDE_PROJECT_DIR, or the hook input's cwd). */
  projectDir: string;
  /** Where managed settings live (/etc/claude-code on Linux). */
  managedDir: string;
  /** The agent's own command line, for --allowedTools and friends. */
  agentArgv: string[];
}

export function claudeRules(context: ClaudeContext): RuleSet {
  const rules = emptyRules();
  addSettings(join(context.configDir, 'settings.json'), rules);
  addSettings(join(context.projectDir, '.claude', 'settings.json'), rules);
  addSettings(join(context.projectDir, '.claude', 'settings.local.json'), rules);
  addSettings(join(context.managedDir, 'managed-settings.json'), rules);
  try {
    const dropIns = readdirSync(join(context.managedDir, 'managed-settings.d')).filter((name) => name.endsWith('.json')).sort();
    for (const name of dropIns) addSettings(join(context.managedDir, 'managed-settings.d', name), rules);
  } catch {
    // No drop-in directory.
  }
  rules.allow.push(...flagValues(context.agentArgv, ['--allowedTools', '--allowed-tools']));
  rules.deny.push(...flagValues(context.agentArgv, ['--disallowedTools', '--disallowed-tools']));
  return rules;
}

/** The specifier of a Bash rule: '' matches every command; null when the rule is about another tool. */
function bashSpecifier(rule: string): string | null {
  const trimmed = rule.trim();
  if (trimmed === 'Bash') return '';
  const match = /^Bash\(([\s\S]*)\)$/.exec(trimmed);
  if (!match) return null;
  const spec = (match[1] ?? '').trim();
  return spec === '*' ? '' : spec;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** Whether a simple command matches a Bash rule's specifier, as Claude Code reads it. */
export function specifierMatches(spec: string, command: string): boolean {
  if (spec === '') return true;
  if (spec.endsWith(':*')) {
    const prefix = spec.slice(0, -2);
    return command === prefix || command.startsWith(`${prefix} `);
  }
  if (!spec.includes('*')) return command === spec;
  // A single trailing " *" also matches the bare command ("ls *" matches "ls").
  const stars = spec.split('*').length - 1;
  if (stars === 1 && spec.endsWith(' *') && command === spec.slice(0, -2)) return true;
  const pattern = spec.split('*').map(escapeRegExp).join('[\\s\\S]*');
  return new RegExp(`^${pattern}$`).test(command);
}

const WRAPPERS = new Set(['sudo', 'env', 'command', 'exec', 'nohup', 'nice', 'timeout', 'time', 'xargs', 'stdbuf', 'ionice', 'setsid', 'builtin']);

/** The simple command as written, and again with leading assignments and wrappers (with their options) taken off. */
function variants(part: string): string[] {
  const out = new Set<string>([part.replace(/\s+/g, ' ')]);
  let words = wordsOf(part);
  out.add(words.join(' '));
  for (let guard = 0; guard < 8 && words.length > 0; guard++) {
    const first = words[0] ?? '';
    if (/^[A-Za-z_][A-Za-z0-9_]*=/.test(first)) words = words.slice(1);
    else if (WRAPPERS.has(first.split('/').pop() ?? first)) {
      words = words.slice(1);
      while (words.length > 1 && ((words[0] ?? '').startsWith('-') || /^[A-Za-z_][A-Za-z0-9_]*=/.test(words[0] ?? '') || /^\d+(\.\d+)?[smhd]?$/.test(words[0] ?? ''))) words = words.slice(1);
    } else break;
    out.add(words.join(' '));
  }
  // And the command by its name alone (/bin/rm as rm).
  for (const v of [...out]) {
    const w = wordsOf(v);
    if (w[0]?.includes('/')) out.add([w[0].split('/').pop() ?? '', ...w.slice(1)].join(' '));
  }
  return [...out].filter((v) => v !== '');
}

/** The literal text of a rule before its first wildcard ("rm -rf" of "Bash(rm -rf:*)"). */
function literalOf(spec: string): string {
  return spec.replace(/:\*$/, '').split('*')[0]!.trim();
}

/** Whether text holds literal as whole words somewhere. */
function mentions(text: string, literal: string): boolean {
  if (literal === '') return false;
  return new RegExp(`(^|[^A-Za-z0-9_./-])${escapeRegExp(literal)}($|[^A-Za-z0-9_-])`).test(text);
}

export interface Verdict {
  decision: Decision;
  reason: string;
}

/**
 * Claude Code's decision for a Bash command, from the user's rules and the
 * session's permission mode: deny, then ask, then allow; bypassPermissions
 * allows what no deny or ask rule caught; dontAsk denies what no allow rule
 * allowed; anything else the rules do not settle is "ask".
 */
export function decideClaude(command: string, rules: RuleSet, permissionMode: string | undefined): Verdict {
  const { parts, opaque } = splitCommand(command);
  const all = [command.trim(), ...parts];
  const specs = (list: string[]) => list.map((rule) => ({ rule, spec: bashSpecifier(rule) })).filter((r): r is { rule: string; spec: string } => r.spec !== null);
  const deny = specs(rules.deny);
  const ask = specs(rules.ask);
  const allow = specs(rules.allow);
  for (const { rule, spec } of deny) {
    if (all.some((part) => variants(part).some((v) => specifierMatches(spec, v)))) return { decision: 'deny', reason: `denied by your Claude Code rule ${rule}` };
  }
  if (rules.unreadable.length > 0) return { decision: 'ask', reason: `Warden could not read ${rules.unreadable[0]}, so it cannot tell what your rules say` };
  for (const { rule, spec } of deny) {
    if (mentions(command, literalOf(spec))) return { decision: 'ask', reason: `your Claude Code deny rule ${rule} may apply to part of this command` };
  }
  for (const { rule, spec } of ask) {
    if (all.some((part) => variants(part).some((v) => specifierMatches(spec, v))) || mentions(command, literalOf(spec)) || spec === '') return { decision: 'ask', reason: `your Claude Code rule ${rule} asks first` };
  }
  const mode = permissionMode ?? rules.defaultMode ?? 'default';
  if (mode === 'bypassPermissions') return { decision: 'allow', reason: 'permissions are bypassed in this session' };
  const allowed = !opaque && parts.length > 0 && parts.every((part) => allow.some(({ spec }) => specifierMatches(spec, part.replace(/\s+/g, ' '))));
  if (allowed) return { decision: 'allow', reason: 'allowed by your Claude Code rules' };
  // A bare Bash rule allows every command no deny or ask rule caught. An opaque one
  // (an expansion, a substitution) could hide a denied command only where deny rules exist.
  if (allow.some(({ spec }) => spec === '') && (!opaque || deny.length === 0)) return { decision: 'allow', reason: 'allowed by your Claude Code rule Bash' };
  if (mode === 'dontAsk') return { decision: 'deny', reason: 'no Claude Code rule allows this command, and this session does not ask' };
  return { decision: 'ask', reason: 'no Claude Code rule allows this command as written' };
}

/** Codex's exec-policy rules (prefix_rule(pattern = [...])): the first tokens of each pattern, or null when a file cannot be read. */
export function codexRulePrefixes(dirs: string[]): string[][] | null {
  const prefixes: string[][] = [];
  for (const dir of dirs) {
    let names: string[];
    try {
      names = readdirSync(dir).filter((name) => name.endsWith('.rules'));
    } catch {
      continue;
    }
    for (const name of names) {
      let text: string;
      try {
        text = readFileSync(join(dir, name), 'utf8');
      } catch {
        return null;
      }
      const calls = text.match(/prefix_rule\s*\(/g)?.length ?? 0;
      const patterns = [...text.matchAll(/pattern\s*=\s*\[([^\]]*)\]/g)].map((m) => [...(m[1] ?? '').matchAll(/"((?:[^"\\]|\\.)*)"|'((?:[^'\\]|\\.)*)'/g)].map((t) => t[1] ?? t[2] ?? ''));
      if (patterns.length < calls) return null;
      prefixes.push(...patterns.filter((p) => p.length > 0));
    }
  }
  return prefixes;
}

/** Whether any simple command of command starts with a word a Codex rule is about. */
export function codexRulesTouch(command: string, prefixes: string[][]): boolean {
  const { parts } = splitCommand(command);
  const firsts = new Set<string>();
  for (const part of [command, ...parts]) for (const v of variants(part)) firsts.add(wordsOf(v)[0] ?? '');
  return prefixes.some((p) => firsts.has(p[0] ?? '') || firsts.has((p[0] ?? '').split('/').pop() ?? ''));
}

/** Whether one of the original command's simple commands (as written, or with assignments and wrappers taken off) starts with prefix as whole words. */
function startsWithWords(command: string, prefix: string): boolean {
  const { parts } = splitCommand(command);
  const want = wordsOf(prefix).join(' ');
  if (want === '') return true;
  return [command, ...parts].some((part) => variants(part).some((v) => v === want || v.startsWith(`${want} `)));
}

function readLoose(path: string): string | null {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return null;
  }
}

/** Strings of a TOML value: "x", 'x' or an array of them. */
function tomlStrings(value: string | undefined): string[] {
  if (value === undefined) return [];
  return [...value.matchAll(/"((?:[^"\\]|\\.)*)"|'([^']*)'/g)].map((m) => (m[1] !== undefined ? (JSON.parse(`"${m[1]}"`) as string) : (m[2] ?? '')));
}

/**
 * Why Gemini CLI's own rules may stop or question this command, or null.
 * Gemini checks its policy on the call as the hook left it, so a deny rule
 * about `rm` would not see `rm` in `warden run ... -- bash -c 'rm ...'`: the
 * hook leaves such commands alone and Gemini judges them itself. Read: the
 * settings' tools.exclude and tools.core (user, project, system), and the
 * policy files' [[rule]]s with decision deny or ask_user (user, project,
 * system policies directories).
 */
export function geminiRestriction(command: string, settingsFiles: string[], policyDirs: string[], parseSettings: (text: string) => unknown): string | null {
  for (const file of settingsFiles) {
    const text = readLoose(file);
    if (text === null) continue;
    let settings: { tools?: { exclude?: unknown; core?: unknown } };
    try {
      settings = parseSettings(text) as typeof settings;
    } catch {
      return `${file} cannot be read`;
    }
    const list = (value: unknown) => (Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : []);
    for (const entry of list(settings?.tools?.exclude)) {
      const m = /^(run_shell_command|ShellTool)\s*(?:\((.*)\))?$/.exec(entry.trim());
      if (m && (m[2] === undefined || startsWithWords(command, m[2]))) return `tools.exclude ${entry} in ${file}`;
    }
    if (list(settings?.tools?.core).some((entry) => /^(run_shell_command|ShellTool)\s*\(/.test(entry.trim()))) return `tools.core limits shell commands in ${file}`;
  }
  for (const dir of policyDirs) {
    let names: string[];
    try {
      names = readdirSync(dir).filter((name) => name.endsWith('.toml'));
    } catch {
      continue;
    }
    for (const name of names) {
      const text = readLoose(join(dir, name));
      if (text === null) return `${join(dir, name)} cannot be read`;
      for (const block of text.split(/^\s*\[\[\s*rule\s*\]\]\s*$/m).slice(1)) {
        const field = (key: string) => new RegExp(`^\\s*${key}\\s*=\\s*(.+)$`, 'm').exec(block.split(/^\s*\[/m)[0] ?? '')?.[1];
        const decision = tomlStrings(field('decision'))[0];
        if (decision !== 'deny' && decision !== 'ask_user') continue;
        const tools = tomlStrings(field('toolName'));
        if (tools.length > 0 && !tools.some((t) => t === 'run_shell_command' || t === '*')) continue;
        const prefixes = tomlStrings(field('commandPrefix'));
        if (prefixes.length > 0 ? prefixes.some((p) => startsWithWords(command, p)) : true) return `a ${decision} rule in ${join(dir, name)}`;
      }
    }
  }
  return null;
}
