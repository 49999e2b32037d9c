// The bash grammar the hook judges commands with: tree-sitter-bash, run by
// web-tree-sitter (both WebAssembly, so nothing native to build on the user's
// machine). Chosen over mvdan/sh's ports after measuring them here: sh-syntax
// (mvdan/sh in WebAssembly) hands JavaScript an AST without the commands'
// words, and mvdan-sh (GopherJS) costs about 180 ms to load, twice what a
// whole hook call may cost; tree-sitter-bash loads in about 30 ms. Where its
// grammar and bash's differ, the walk (walk.ts) treats what it cannot be sure
// of as doubt, and the differential test (differential.test.ts) holds the two
// against each other by running bash itself.

import { createRequire } from 'node:module';
import { setFlagsFromString } from 'node:v8';
import type { Node } from 'web-tree-sitter';

export type BashNode = Node;

export interface BashGrammar {
  /** Calls use with the syntax tree of text and frees the tree after; null when the text is too large to parse. */
  withTree<T>(text: string, use: (root: BashNode) => T): T | null;
}

let loading: Promise<BashGrammar> | undefined;

/** Commands longer than this are not parsed: they are "ask" (no harness sends one; a parse stays well under a millisecond below it). */
export const MAX_COMMAND_CHARS = 256 * 1024;

/**
 * Loads the grammar once per process. In a short-lived process (the hook)
 * V8's optimising compiler would spend most of a second on the grammar's 1.3 MB
 * of WebAssembly before the first parse; its baseline compiler (Liftoff) alone
 * takes milliseconds and parses a command line just as well.
 */
export function loadBashGrammar(options: { shortLived?: boolean } = {}): Promise<BashGrammar> {
  if (loading) return loading;
  if (options.shortLived) setFlagsFromString('--liftoff-only');
  loading = (async () => {
    const require = createRequire(import.meta.url);
    const { Parser, Language } = await import('web-tree-sitter');
    await Parser.init();
    const bash = await Language.load(require.resolve('tree-sitter-bash/tree-sitter-bash.wasm'));
    const parser = new Parser();
    parser.setLanguage(bash);
    return {
      withTree<T>(text: string, use: (root: BashNode) => T): T | null {
        if (text.length > MAX_COMMAND_CHARS) return null;
        const tree = parser.parse(text);
        if (!tree) return null;
        try {
          return use(tree.rootNode);
        } finally {
          // The tree lives in the WebAssembly heap, which no garbage collector sees.
          tree.delete();
        }
      },
    };
  })();
  loading.catch(() => {
    loading = undefined;
  });
  return loading;
}
