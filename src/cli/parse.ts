// Command-line words to options, through Node's own util.parseArgs (no
// dependency to load on every call). parseArgs splits the words (--flag=value,
// -c VALUE, `--`, repeated options); the commands check each value themselves,
// so every mistake stays one line of Warden's own (a UsageError, exit 125).

import { parseArgs } from 'node:util';
import { InputError } from '../shared/errors';

/** A command line Warden cannot do as given: one line, exit 125. */
export class UsageError extends InputError {
  override name = 'UsageError';
}

export interface OptionSpec {
  type: 'string' | 'boolean';
  short?: string;
}

export type OptionToken =
  | { kind: 'option'; name: string; rawName: string; value: string | undefined; index: number }
  | { kind: 'positional'; value: string; index: number }
  | { kind: 'option-terminator'; index: number };

/**
 * The words as tokens, in order. Unknown options are refused with
 * `unknown(rawName)` (default: "Unknown option X for warden NAME"); a value
 * option without its value says "X needs a value."; a switch given a value
 * ("--json=yes") is refused too.
 */
export function tokensOf(args: string[], spec: Record<string, OptionSpec>, command: string, unknown?: (rawName: string) => string): OptionToken[] {
  const { tokens } = parseArgs({ args, options: spec, strict: false, allowPositionals: true, tokens: true });
  const out: OptionToken[] = [];
  for (const token of tokens) {
    if (token.kind === 'option') {
      const known = Object.hasOwn(spec, token.name) ? spec[token.name] : undefined;
      if (!known) throw new UsageError(unknown ? unknown(token.rawName) : `Unknown option ${token.rawName} for warden ${command} (see warden ${command} --help).`);
      if (known.type === 'string' && token.value === undefined) throw new UsageError(`${token.rawName} needs a value.`);
      if (known.type === 'boolean' && token.inlineValue) throw new UsageError(`${token.rawName} takes no value.`);
      out.push({ kind: 'option', name: token.name, rawName: token.rawName, value: token.value, index: token.index });
    } else if (token.kind === 'positional') {
      out.push({ kind: 'positional', value: token.value, index: token.index });
    } else {
      out.push({ kind: 'option-terminator', index: token.index });
    }
  }
  return out;
}

/** Options before the first word that is not one (or before `--`), and the words from there on, kept as given. */
export function splitAtCommand(args: string[], spec: Record<string, OptionSpec>, command: string, unknown?: (rawName: string) => string): { options: OptionToken[]; rest: string[] } {
  // Tokenize without checking first: a word after the command is the command's, whatever it looks like.
  const { tokens } = parseArgs({ args, options: spec, strict: false, allowPositionals: true, tokens: true });
  const first = tokens.find((t) => t.kind === 'positional' || t.kind === 'option-terminator');
  const end = first ? first.index : args.length;
  const rest = first ? args.slice(first.kind === 'option-terminator' ? end + 1 : end) : [];
  return { options: tokensOf(args.slice(0, end), spec, command, unknown), rest };
}
