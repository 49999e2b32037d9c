import js from '@eslint/js';
import tseslint from 'typescript-eslint';

// Layers (docs/architecture.md, "Layout"): each folder may import only the
// ones below it. A relative import is matched by the folders its path names;
// circles, which no per-file rule can see, are found by
// scripts/check-cycles.mjs, which `npm run lint` runs too.
const NODE_BUILTINS = ['fs', 'fs/promises', 'child_process', 'os', 'net', 'path', 'stream', 'util', 'crypto', 'events', 'url', 'http', 'https', 'tty', 'worker_threads', 'module'];
/** A relative import that passes through one of these folders. */
const through = (...names) => `^\\.\\.?/(.*/)?(${names.join('|')})(/|$)`;
const ELECTRON = { name: 'electron', message: 'The engine runs in plain Node: only src/main/app/index.ts and src/preload import electron.' };
const layer = (message, regexes, paths = [ELECTRON]) => ({
  'no-restricted-imports': ['error', { paths, patterns: regexes.map((regex) => ({ regex, message })) }],
});
/** Node's modules, for the layers that run in the page or in both. */
const noNode = (message) => [...NODE_BUILTINS.map((name) => ({ name, message })), { name: 'electron', message }];
// Tests and their kits may reach up a layer (a store test drives a real host); the code that ships may not.
const TESTS = ['**/*.test.ts', '**/*.test.tsx', '**/*testkit*.ts'];

export default tseslint.config(
  { ignores: ['node_modules/', 'out/', 'dist/', 'coverage/', 'scratch/', 'test-results/', 'playwright-report/', 'reports/', '.stryker-tmp/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      globals: { process: 'readonly', console: 'readonly', performance: 'readonly', setTimeout: 'readonly', clearTimeout: 'readonly', setInterval: 'readonly', clearInterval: 'readonly', Buffer: 'readonly', URL: 'readonly', TextDecoder: 'readonly', TextEncoder: 'readonly' },
    },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-non-null-assertion': 'off',
    },
  },
  {
    files: ['src/shared/**'],
    rules: {
      ...layer('src/shared is the contract every layer reads: it imports nothing of Node, Electron or another folder.', ['^node:', '^\\.\\./'], noNode('src/shared imports nothing of Node or Electron.')),
      'no-restricted-globals': ['error', ...['process', 'Buffer', 'require', '__dirname', 'window', 'document', 'navigator', 'localStorage'].map((name) => ({ name, message: 'src/shared runs in Node and in the page: it uses neither one\'s globals.' }))],
    },
  },
  {
    files: ['src/main/supervisor/**'],
    ignores: TESTS,
    rules: layer('The supervisor is the bottom layer of the engine: it imports only src/shared (never host, store, client, cli, mcp or the app).', [through('host', 'store', 'client', 'cli', 'mcp', 'app')]),
  },
  {
    files: ['src/main/store/**'],
    ignores: TESTS,
    rules: layer('The store sits on the supervisor: it never imports host, cli, mcp or the app.', [through('host', 'cli', 'mcp', 'app')]),
  },
  {
    files: ['src/main/host/**'],
    ignores: TESTS,
    rules: layer('The host imports the engine, the store and the client, never cli, mcp or the app (src/main/app).', [through('cli', 'mcp', 'app')]),
  },
  {
    files: ['src/main/app/**'],
    ignores: [...TESTS, 'src/main/app/index.ts'],
    rules: layer('The app (the Electron shell) imports the host, the store, the client and src/shared, never the supervisor (it reaches the engine through the host), cli, mcp, the preload or the renderer; only its entry, index.ts, imports electron.', [through('supervisor', 'cli', 'mcp', 'preload', 'renderer')]),
  },
  {
    files: ['src/main/app/index.ts'],
    rules: layer('The app (the Electron shell) imports the host, the store, the client and src/shared, never the supervisor (it reaches the engine through the host), cli, mcp, the preload or the renderer.', [through('supervisor', 'cli', 'mcp', 'preload', 'renderer')], []),
  },
  {
    files: TESTS.map((pattern) => `src/main/{supervisor,store,host}/${pattern}`),
    rules: { 'no-restricted-imports': ['error', { paths: [ELECTRON] }] },
  },
  {
    files: ['src/client/**'],
    ignores: TESTS,
    rules: layer('src/client is what every front end uses to reach a host: it never imports main, cli or mcp.', [through('main', 'cli', 'mcp')]),
  },
  {
    files: ['src/cli/**'],
    ignores: TESTS,
    rules: layer('cli never imports mcp (mcp builds on the CLI; src/warden.ts joins them).', [through('mcp')]),
  },
  {
    files: ['src/preload/**'],
    rules: layer('The preload bridges IPC: it imports electron and src/shared only.', [through('main', 'client', 'cli', 'mcp', 'renderer')], []),
  },
  {
    files: ['src/renderer/**'],
    rules: layer('The renderer is sandboxed: it talks only to window.warden and imports only src/shared.', ['^node:', through('main', 'client', 'cli', 'mcp', 'preload')], noNode('The renderer is sandboxed: it talks only to window.warden.')),
  },
);
