// @ts-check
import eslint from '@eslint/js';
import prettier from 'eslint-config-prettier';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['node_modules', 'dist', '.data', '.tools', 'coverage'] },
  eslint.configs.recommended,
  ...tseslint.configs.strictTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/restrict-template-expressions': ['error', { allowNumber: true }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_' }],
      'no-console': 'error',
      // Fastify plugins and hooks are async by convention, whether or not they await.
      '@typescript-eslint/require-await': 'off',
    },
  },
  {
    // Workflow code runs in Temporal's deterministic sandbox (its Date is the workflow's time):
    // no randomness or I/O.
    files: ['workflows/**/*.ts', 'bench/calibration/workflow.ts'],
    rules: {
      'no-restricted-globals': ['error', 'setTimeout', 'setInterval', 'fetch', 'process'],
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['node:*', 'fs', 'http', 'https', 'crypto', 'pg', 'ioredis', 'lmdb'],
              message: 'Workflows must stay deterministic: no I/O or Node built-ins.',
            },
            {
              group: ['../activities', '../activities/*', '../src/*'],
              allowTypeImports: true,
              message: 'Workflows import activity and domain types only (import type).',
            },
          ],
        },
      ],
      'no-restricted-properties': [
        'error',
        {
          object: 'Math',
          property: 'random',
          message: 'Use the SDK uuid4() or deterministic ids.',
        },
      ],
    },
  },
  {
    // The campaign page's browser modules, served as written (no build step, so no types).
    files: ['src/demo-page/public/**/*.js'],
    ...tseslint.configs.disableTypeChecked,
    languageOptions: {
      ...tseslint.configs.disableTypeChecked.languageOptions,
      sourceType: 'module',
      globals: globals.browser,
    },
  },
  {
    files: [
      'eslint.config.mjs',
      'jest.config.js',
      'jest.production.config.js',
      '.dependency-cruiser.cjs',
    ],
    ...tseslint.configs.disableTypeChecked,
    languageOptions: {
      ...tseslint.configs.disableTypeChecked.languageOptions,
      globals: { module: 'writable' },
    },
  },
  prettier,
);
