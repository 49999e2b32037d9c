import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['node_modules/', 'out/', 'dist/', 'coverage/', 'scratch/', 'test-results/', 'playwright-report/'] },
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
    files: ['src/main/supervisor/**', 'src/main/store/**', 'src/main/host/**', 'src/shared/**'],
    rules: {
      'no-restricted-imports': ['error', { paths: [{ name: 'electron', message: 'The engine runs in plain Node: only src/main/index.ts and src/preload import electron.' }] }],
    },
  },
  {
    files: ['src/renderer/**'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [{ group: ['node:*', 'fs', 'child_process', 'os', 'net', 'path', 'electron'], message: 'The renderer is sandboxed: it talks only to window.warden.' }] }],
    },
  },
);
