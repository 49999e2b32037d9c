// What a bash command line would run, read from its syntax tree (bash-grammar.ts):
// every simple command anywhere in it (lists, pipelines, subshells, groups,
// loops, conditionals, functions, command and process substitutions, the
// substitutions inside redirections, here-documents and arithmetic), each as
// its words where they are literal text and null where bash would expand
// them, and the doubts: whatever lets bash run something the words do not
// show. The rules (rules.ts) allow a command only when nothing is in doubt
// that a rule could be about.
//
// Where bash might do something this walk cannot see, it says so (a doubt)
// rather than guess:
//
// | construct                                        | why it is a doubt                                    |
// |--------------------------------------------------|------------------------------------------------------|
// | a parse error or a node the grammar marks missing | the grammar and bash may disagree on what runs       |
// | a node type this walk does not know              | a newer grammar: nothing unknown is trusted          |
// | backslash-newline right after a word's character | bash joins the two lines' words; the grammar splits  |
// | PATH, IFS, BASH_ENV, LD_*, PS4 ... assigned       | what later names run, or what bash runs, changes     |
// | arithmetic with a substitution, or beside an     | bash evaluates a variable's text as an expression,   |
// |   assignment, read, declare or a for variable     |   and a[$(cmd)] in it runs cmd                        |
// | ${x@P}                                            | prompt expansion runs substitutions in x's value     |
// | declare -n / -i, local -n / -i                    | a name reference or integer attribute does the same  |
//
// Commands whose words are fine but which run other commands the words do
// not show (eval, source, exec, sh -c, xargs, env, sudo, trap, alias, ...)
// are marked `indirect` by rules-side tables (match.ts).

import type { BashNode } from './bash-grammar';

export interface Assignment {
  name: string;
  /** The value as literal text, or null where bash expands it. */
  value: string | null;
}

export interface SimpleCommand {
  /** The command's words (its name first), each the literal text bash would pass, or null where bash expands it. */
  words: (string | null)[];
  /** Assignments written before the name (X=1 cmd). */
  assignments: Assignment[];
  /** The command as written, for messages. */
  text: string;
}

export interface Analysis {
  commands: SimpleCommand[];
  /** Assignments that stand alone (X=1; ...), and those a declaration makes (export X=1). */
  assignments: Assignment[];
  /** Why bash may run something the commands do not show; empty when nothing is in doubt. */
  doubts: string[];
  /** A redirection writes a file (anything but /dev/null or another descriptor). */
  writesFiles: boolean;
}

/** Variables whose value decides which program a name runs, or what bash itself runs or reads. */
export function isDangerousVariable(name: string): boolean {
  return /^(PATH|IFS|ENV|BASH_ENV|BASH_.*|BASHOPTS|SHELLOPTS|PS4|PROMPT_COMMAND|CDPATH|GLOBIGNORE|EXECIGNORE|LD_.*|HOSTALIASES|LOCPATH|GCONV_PATH|PYTHONSTARTUP|PERL5OPT|NODE_OPTIONS)$/.test(name);
}

const CONTAINERS = new Set([
  'program', 'list', 'pipeline', 'subshell', 'compound_statement', 'redirected_statement', 'negated_command', 'do_group',
  'if_statement', 'elif_clause', 'else_clause', 'while_statement', 'case_statement', 'case_item', 'function_definition',
  'command_substitution', 'process_substitution', 'heredoc_redirect', 'herestring_redirect', 'heredoc_body', 'string',
  'concatenation', 'expansion', 'simple_expansion', 'array', 'test_command', 'binary_expression', 'unary_expression',
  'ternary_expression', 'parenthesized_expression', 'postfix_expression', 'brace_expression', 'translated_string',
  'arithmetic_expansion', 'subscript', 'c_style_for_statement', 'for_statement', 'variable_assignments', 'command_name',
]);

/** Leaves that run nothing. */
const LEAVES = new Set([
  'word', 'number', 'raw_string', 'ansi_c_string', 'string_content', 'heredoc_content', 'heredoc_start', 'heredoc_end',
  'variable_name', 'special_variable_name', 'file_descriptor', 'test_operator', 'regex', 'extglob_pattern', 'comment',
]);

/** Builtins that set variables named by their words. */
const VARIABLE_SETTERS = new Set(['read', 'mapfile', 'readarray', 'getopts', 'printf', 'declare', 'typeset', 'local', 'export', 'readonly', 'let']);

/** The literal text of an unquoted word, or null where bash would expand, glob or split it. */
export function unquotedLiteral(text: string): string | null {
  if (text === '') return null;
  if (text.startsWith('~') || text.includes('=~') || text.includes(':~')) return null;
  const open = text.indexOf('[');
  if (open >= 0 && text.indexOf(']', open + 1) > open) return null;
  // A brace expands only with a partner in the same word ({a,b}, {1..3}); one alone, or {}, is itself.
  if (text !== '{}' && text !== '{' && text !== '}' && /[{}]/.test(text.replace(/\\./gs, ''))) return null;
  let out = '';
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === '\\') {
      const next = text[i + 1];
      if (next === undefined) return null;
      if (next !== '\n') out += next;
      i++;
      continue;
    }
    if (/[\s$`*?()<>|&;'"]/.test(c) || c < ' ' || c === '\x7f') return null;
    out += c;
  }
  return out;
}

/** The literal text of a double-quoted string ("..." with its quotes), or null where it holds an expansion. */
export function doubleQuotedLiteral(text: string): string | null {
  if (text.length < 2 || !text.startsWith('"') || !text.endsWith('"')) return null;
  let out = '';
  for (let i = 1; i < text.length - 1; i++) {
    const c = text[i]!;
    if (c === '\\') {
      const next = text[i + 1];
      if (next === undefined || i + 1 >= text.length - 1) return null;
      if (next === '\n') {
        i++;
        continue;
      }
      if ('$`"\\'.includes(next)) {
        out += next;
        i++;
        continue;
      }
      out += c;
      continue;
    }
    if (c === '$' || c === '`' || c === '"') return null;
    out += c;
  }
  return out;
}

/** A word node's literal text, or null. */
export function literalOf(node: BashNode): string | null {
  switch (node.type) {
    case 'word':
    case 'number':
      return unquotedLiteral(node.text);
    case 'raw_string': {
      const text = node.text;
      return text.length >= 2 && text.startsWith("'") && text.endsWith("'") && !text.slice(1, -1).includes("'") ? text.slice(1, -1) : null;
    }
    case 'string':
      return doubleQuotedLiteral(node.text);
    case 'concatenation': {
      // The grammar splits a{b,c}d into pieces; bash expands it into words.
      if (node.text !== '{}' && node.children.some((c) => c.type === 'word' && (c.text === '{' || c.text === '}'))) return null;
      let out = '';
      let at = node.startIndex;
      for (const child of node.children) {
        // Text between two parts that the grammar kept in neither would be lost: not literal.
        if (child.startIndex !== at) return null;
        const part = literalOf(child);
        if (part === null) return null;
        out += part;
        at = child.endIndex;
      }
      return at === node.endIndex ? out : null;
    }
    default:
      return null;
  }
}

function assignmentOf(node: BashNode): Assignment | null {
  const name = node.children[0];
  if (!name || (name.type !== 'variable_name' && name.type !== 'subscript')) return null;
  const eq = node.children[1];
  const value = node.children[2];
  const literal = value === undefined ? '' : eq?.type === '=' ? literalOf(value) : null;
  return { name: name.type === 'variable_name' ? name.text : name.text.split('[')[0]!, value: literal };
}

/** Builtins whose words are variable names, whose subscripts bash evaluates. */
const NAME_TAKERS = new Set(['unset', 'read', 'printf', 'test', 'declare', 'typeset', 'local', 'export', 'readonly', 'mapfile', 'readarray', 'getopts', 'let', 'wait']);

const ARITHMETIC_TEST = /(^|\s)-(eq|ne|lt|le|gt|ge)(\s|$)/;

/** Reads a command line's syntax tree (root: a tree-sitter-bash `program`). */
export function analyze(root: BashNode): Analysis {
  const commands: SimpleCommand[] = [];
  const assignments: Assignment[] = [];
  const doubts = new Set<string>();
  let writesFiles = false;
  let setsVariables = false;
  let arithmetic = false;
  let substitutionInArithmetic = false;
  let arithmeticDepth = 0;
  let indirectExpansion = false;

  const doubt = (why: string) => doubts.add(why);
  // unset, read, printf -v, test -v, declare, ${!x} ... take a variable's name, and evaluate a subscript in it: a[$(cmd)] runs cmd.
  const subscriptText = (text: string | null) => {
    if (text !== null && /\[[^\]]*(\$\(|`|\$\[|\$\{)/.test(text)) doubt('a word with a subscript that runs a command if bash takes it as a variable name');
  };

  const assign = (node: BashNode, into: Assignment[]) => {
    setsVariables = true;
    const assignment = assignmentOf(node);
    if (!assignment) {
      doubt('an assignment Warden cannot read');
      return;
    }
    if (isDangerousVariable(assignment.name)) doubt(`it sets ${assignment.name}, which changes what bash runs`);
    if (node.children[0]?.type === 'subscript') arithmetic = true;
    into.push(assignment);
  };

  const redirect = (node: BashNode) => {
    // bash takes the words after a redirection's target as the command's arguments (cmd > f arg), and the
    // grammar as more targets, even across a newline (2>&1 NEWLINE rm x): what runs is then unclear.
    if (node.namedChildren.filter((c) => c.type !== 'file_descriptor').length > 1) doubt('words after a redirection, which bash reads as arguments and Warden cannot place');
    const op = node.children.find((c) => !c.isNamed)?.type ?? '';
    const target = node.children.at(-1);
    const literal = target ? literalOf(target) : null;
    const toDescriptor = (op === '>&' || op === '<&' || op === '>&-' || op === '<&-') && (literal === null ? false : /^(\d+|-)$/.test(literal));
    const harmless = op === '<' || op === '<&-' || op === '>&-' || toDescriptor || (literal !== null && /^\/dev\/(null|stdout|stderr)$/.test(literal));
    if (!harmless) writesFiles = true;
  };

  const visit = (node: BashNode): void => {
    if (node.type === 'ERROR' || node.isMissing) {
      doubt('bash may read this command differently from Warden (it does not parse cleanly)');
    }
    if (!node.isNamed) {
      if (node.type === '((' && node.parent?.type === 'compound_statement') arithmetic = true;
      return;
    }
    switch (node.type) {
      case 'command':
        command(node);
        return;
      case 'declaration_command':
      case 'unset_command':
        declaration(node);
        return;
      case 'variable_assignment':
        assign(node, assignments);
        for (const child of node.children.slice(2)) visit(child);
        return;
      case 'file_redirect':
        redirect(node);
        for (const child of node.children) visit(child);
        return;
      case 'for_statement':
        setsVariables = true;
        break;
      case 'test_command': {
        if (node.children[0]?.type === '[') commands.push({ words: ['[', null], assignments: [], text: node.text });
        // -eq and friends evaluate both sides as arithmetic; -v evaluates a name's subscript.
        if (!ARITHMETIC_TEST.test(node.text) && !/(^|\s)-v(\s|$)/.test(node.text)) break;
        arithmetic = true;
        arithmeticDepth++;
        for (const child of node.children) visit(child);
        arithmeticDepth--;
        return;
      }
      case 'compound_statement':
        if (node.children[0]?.type !== '((') break;
        arithmetic = true;
        arithmeticDepth++;
        for (const child of node.children) visit(child);
        arithmeticDepth--;
        return;
      case 'arithmetic_expansion':
      case 'c_style_for_statement':
      case 'subscript':
        arithmetic = true;
        arithmeticDepth++;
        for (const child of node.children) visit(child);
        arithmeticDepth--;
        return;
      case 'command_substitution':
      case 'process_substitution':
        if (arithmeticDepth > 0) substitutionInArithmetic = true;
        break;
      case 'expansion':
        if (/@P\s*}$/.test(node.text)) doubt('${...@P} expands its value as a prompt, which runs what it names');
        if (node.text.startsWith('${!')) indirectExpansion = true;
        if (arithmeticDepth > 0) substitutionInArithmetic ||= /\$\(|`/.test(node.text);
        break;
      default:
        if (LEAVES.has(node.type)) {
          if (node.type === 'word' || node.type === 'raw_string' || node.type === 'number') subscriptText(literalOf(node));
          // A word with a blank in it that no backslash escapes is one the grammar read past a separator.
          if (node.type === 'word' && /\s/.test(node.text.replace(/\\[\s\S]/g, ''))) doubt('a word that runs across a blank or a line');
          return;
        }
        if (!CONTAINERS.has(node.type)) doubt(`a construct Warden does not know (${node.type})`);
    }
    if (node.type === 'string' || node.type === 'concatenation') subscriptText(literalOf(node));
    for (const child of node.children) visit(child);
  };

  const command = (node: BashNode) => {
    const words: (string | null)[] = [];
    const own: Assignment[] = [];
    for (const child of node.children) {
      if (child.type === 'variable_assignment') {
        assign(child, own);
        for (const part of child.children.slice(2)) visit(part);
        continue;
      }
      if (child.type === 'command_name') {
        const name = child.children[0];
        words.push(name && child.children.length === 1 ? literalOf(name) : null);
        visit(child);
        continue;
      }
      if (child.type === 'file_redirect' || child.type === 'heredoc_redirect' || child.type === 'herestring_redirect') {
        visit(child);
        continue;
      }
      if (!child.isNamed) continue;
      words.push(literalOf(child));
      visit(child);
    }
    if (words.length === 0) {
      // Only assignments and redirections: they run nothing, but the assignments stand as if alone.
      assignments.push(...own);
      return;
    }
    const name = words[0] ?? null;
    if (name === null || VARIABLE_SETTERS.has(name)) setsVariables = true;
    if (name === 'let') arithmetic = true;
    if (name !== null && NAME_TAKERS.has(name) && (name !== 'printf' || words.includes('-v')) && words.slice(1).some((w) => w === null)) {
      doubt(`${name} with a word Warden cannot read, which bash may take as a variable name and evaluate`);
    }
    commands.push({ words, assignments: own, text: node.text });
  };

  const declaration = (node: BashNode) => {
    const keyword = node.children[0]?.type ?? '';
    const words: (string | null)[] = [keyword];
    setsVariables = true;
    for (const child of node.children.slice(1)) {
      if (child.type === 'variable_assignment') {
        assign(child, assignments);
        const assignment = assignmentOf(child);
        words.push(assignment && assignment.value !== null ? `${assignment.name}=${assignment.value}` : null);
        for (const part of child.children.slice(2)) visit(part);
        continue;
      }
      if (child.type === 'variable_name') {
        if (isDangerousVariable(child.text)) doubt(`it declares ${child.text}, which changes what bash runs`);
        words.push(child.text);
        continue;
      }
      if (!child.isNamed) continue;
      const literal = literalOf(child);
      if (literal !== null && /^[-+][a-zA-Z]*[ni]/.test(literal) && keyword !== 'unset' && keyword !== 'export') {
        doubt(`${keyword} ${literal} makes later assignments run as expressions or name other variables`);
      }
      if (literal === null) doubt(`${keyword} with a word Warden cannot read`);
      words.push(literal);
      visit(child);
    }
    commands.push({ words, assignments: [], text: node.text });
  };

  visit(root);
  if (substitutionInArithmetic) doubt('a substitution inside arithmetic, whose text bash evaluates again');
  if (indirectExpansion && setsVariables) doubt('${!name} beside variables this command sets: the name it reads may hold a[$(cmd)]');
  if (arithmetic && setsVariables) doubt('arithmetic beside variables this command sets: bash evaluates their text, and a[$(cmd)] in it runs cmd');
  return { commands, assignments, doubts: [...doubts], writesFiles };
}

/** The analysis of a command line as bash would read it; null when it is too large to parse. */
export function analyzeCommand(grammar: { withTree<T>(text: string, use: (root: BashNode) => T): T | null }, text: string): Analysis | null {
  return grammar.withTree(text, (root) => {
    const analysis = analyze(root);
    // bash takes a carriage return or another control character as part of a word; the grammar may not.
    if ([...text].some((c) => (c < ' ' && c !== '\n' && c !== '\t') || c === '\x7f')) analysis.doubts.push('a control character, which bash and Warden may split differently');
    if (joinedLines(text, root)) analysis.doubts.push('a backslash-newline that joins a word to the next line');
    return analysis;
  });
}

/** Backslash-newlines that join a word to the next line's (bash joins them; tree-sitter-bash splits the word). */
export function joinedLines(text: string, root: BashNode): boolean {
  const quoted: [number, number][] = [];
  const collect = (node: BashNode) => {
    if (node.type === 'raw_string' || node.type === 'comment' || node.type === 'heredoc_body' || node.type === 'ansi_c_string' || node.type === 'string') {
      quoted.push([node.startIndex, node.endIndex]);
      return;
    }
    for (const child of node.children) collect(child);
  };
  collect(root);
  for (let at = text.indexOf('\\\n'); at >= 0; at = text.indexOf('\\\n', at + 2)) {
    if (quoted.some(([start, end]) => at >= start && at < end)) continue;
    // An escaped backslash before it (\\ then a newline) is not a continuation.
    let slashes = 0;
    for (let i = at; i >= 0 && text[i] === '\\'; i--) slashes++;
    if (slashes % 2 === 0) continue;
    const before = text[at - 1];
    if (before !== undefined && !/\s/.test(before)) return true;
  }
  return false;
}
