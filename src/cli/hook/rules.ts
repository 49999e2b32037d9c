// A harness's own permission rules, applied to the ORIGINAL command before
// the hook rewrites it: the harness checks its rules against the rewritten
// `warden run ...` line, where a rule such as Bash(npm test:*) no longer
// matches, and a hook that answers "allow" skips the rules altogether. So the
// hook answers with the decision the user's rules give the original, and
// "ask" whenever it cannot tell.
//
// Claude Code: permissions.allow / ask / deny from the settings it reads
// (managed, user, project, local) and --allowedTools / --disallowedTools on
// its command line; deny, then ask, then allow. Rules are Bash, Bash(*),
// Bash(prefix:*), Bash(exact) and Bash(glob with *), matched (match.ts)
// against every simple command bash would run, as the grammar reads the line
// (walk.ts): a command is allowed only when each of them is proven to match
// an allow rule and nothing bash might run is in doubt. Deny and ask are
// matched generously, allow strictly.

import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { allowForms, certainMatch, denyForms, indirection, parseRule, possibleMatch, ruleWords, type Spec } from './match';
import type { Analysis, SimpleCommand } from './walk';

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

export interface Verdict {
  decision: Decision;
  reason: string;
}

function bashRules(list: string[]): { rule: string; spec: Spec }[] {
  return list.map((rule) => ({ rule, spec: parseRule(rule) })).filter((r): r is { rule: string; spec: Spec } => r.spec !== null);
}

function shown(command: SimpleCommand): string {
  const text = command.text.replace(/\s+/g, ' ').trim();
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

/**
 * Claude Code's decision for a Bash command, from the user's rules and the
 * session's permission mode, over every simple command bash would run
 * (analysis, from walk.ts; null when the command is too large to read):
 * deny, then ask, then allow. A deny or ask rule that could apply, and
 * anything in doubt while such rules exist, asks; bypassPermissions allows
 * what no deny or ask rule caught; a command is allowed only when each of
 * its simple commands is proven to match an allow rule and nothing is in
 * doubt (a bare Bash rule allows what no deny or ask rule could be about);
 * dontAsk denies what is not allowed; anything else is "ask".
 */
export function decideClaude(analysis: Analysis | null, rules: RuleSet, permissionMode: string | undefined): Verdict {
  const deny = bashRules(rules.deny);
  const ask = bashRules(rules.ask);
  const allow = bashRules(rules.allow);
  if (analysis === null) return { decision: 'ask', reason: 'the command is too long for Warden to read' };
  const { commands, doubts } = analysis;
  for (const { rule, spec } of deny) {
    const hit = commands.find((c) => denyForms(c.words).some((form) => certainMatch(spec, form)));
    if (hit) return { decision: 'deny', reason: `denied by your Claude Code rule ${rule} (${shown(hit)})` };
  }
  if (rules.unreadable.length > 0) return { decision: 'ask', reason: `Warden could not read ${rules.unreadable[0]}, so it cannot tell what your rules say` };
  for (const { rule, spec } of deny) {
    const hit = commands.find((c) => denyForms(c.words).some((form) => possibleMatch(spec, form)));
    if (hit) return { decision: 'ask', reason: `your Claude Code deny rule ${rule} may apply to ${shown(hit)}` };
  }
  for (const { rule, spec } of ask) {
    if (spec.kind === 'any' || commands.some((c) => denyForms(c.words).some((form) => possibleMatch(spec, form)))) return { decision: 'ask', reason: `your Claude Code rule ${rule} asks first` };
  }
  if (deny.length + ask.length > 0) {
    for (const c of commands) {
      const why = indirection(c.words);
      if (why !== null) return { decision: 'ask', reason: `${why} (${shown(c)}), so Warden cannot check your deny and ask rules against it` };
    }
    if (doubts.length > 0) return { decision: 'ask', reason: `${doubts[0]}, so Warden cannot check your deny and ask rules against it` };
  }
  const mode = permissionMode ?? rules.defaultMode ?? 'default';
  if (mode === 'bypassPermissions') return { decision: 'allow', reason: 'permissions are bypassed in this session' };
  if (allow.some(({ spec }) => spec.kind === 'any')) return { decision: 'allow', reason: 'allowed by your Claude Code rule Bash' };
  const unproven = commands.find((c) => indirection(c.words) !== null || !allowForms(c.words, c.assignments).some((form) => allow.some(({ spec }) => certainMatch(spec, form))));
  if (doubts.length === 0 && !analysis.writesFiles && commands.length > 0 && unproven === undefined) return { decision: 'allow', reason: 'allowed by your Claude Code rules' };
  if (mode === 'dontAsk') return { decision: 'deny', reason: 'no Claude Code rule allows this command, and this session does not ask' };
  if (unproven) return { decision: 'ask', reason: `no Claude Code rule allows ${shown(unproven)} as written` };
  if (doubts.length > 0) return { decision: 'ask', reason: `${doubts[0]}, so no rule can vouch for it` };
  if (analysis.writesFiles) return { decision: 'ask', reason: 'it writes to a file, which only a bare Bash rule allows' };
  return { decision: 'ask', reason: 'no Claude Code rule allows this command as written' };
}

/** The decision when no part of the command line can change it (no deny or ask rule, and the session allows every command), without reading the line. */
export function decideUnread(rules: RuleSet, permissionMode: string | undefined): Verdict | null {
  if (rules.unreadable.length > 0 || bashRules(rules.deny).length + bashRules(rules.ask).length > 0) return null;
  if ((permissionMode ?? rules.defaultMode) === 'bypassPermissions') return { decision: 'allow', reason: 'permissions are bypassed in this session' };
  if (bashRules(rules.allow).some(({ spec }) => spec.kind === 'any')) return { decision: 'allow', reason: 'allowed by your Claude Code rule Bash' };
  return null;
}

/** Whether a harness's rule about a command starting with prefix could be about part of this command line: some simple command could start with it, or one runs what Warden cannot see. */
export function touches(analysis: Analysis | null, prefix: readonly string[]): boolean {
  if (analysis === null || analysis.doubts.length > 0) return true;
  if (prefix.length === 0) return true;
  const spec: Spec = { kind: 'prefix', words: [...prefix] };
  return analysis.commands.some((c) => indirection(c.words) !== null || denyForms(c.words).some((form) => possibleMatch(spec, form)));
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

/** Whether a Codex exec-policy rule (by its first token) could be about part of the command: then Codex must judge the original. */
export function codexRulesTouch(analysis: Analysis | null, prefixes: string[][]): boolean {
  return prefixes.some((p) => touches(analysis, p.slice(0, 1)));
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
export async function geminiRestriction(read: () => Promise<Analysis | null>, settingsFiles: string[], policyDirs: string[], parseSettings: (text: string) => unknown): Promise<string | null> {
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
      if (m && (m[2] === undefined || touches(await read(), ruleWords(m[2])))) return `tools.exclude ${entry} in ${file}`;
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
      // A [[rule]] header may carry a comment (TOML allows one after any header).
      for (const block of text.split(/^\s*\[\[\s*rule\s*\]\]\s*(?:#.*)?$/m).slice(1)) {
        const field = (key: string) => new RegExp(`^\\s*${key}\\s*=\\s*(.+)$`, 'm').exec(block.split(/^\s*\[/m)[0] ?? '')?.[1];
        const decision = tomlStrings(field('decision'))[0];
        if (decision !== 'deny' && decision !== 'ask_user') continue;
        const tools = tomlStrings(field('toolName'));
        if (tools.length > 0 && !tools.some((t) => t === 'run_shell_command' || t === '*')) continue;
        const prefixes = tomlStrings(field('commandPrefix'));
        const analysis = prefixes.length > 0 ? await read() : null;
        if (prefixes.length > 0 ? prefixes.some((p) => touches(analysis, ruleWords(p))) : true) return `a ${decision} rule in ${join(dir, name)}`;
      }
    }
  }
  return null;
}
