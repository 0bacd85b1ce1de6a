// @ts-check
import js from '@eslint/js';
import { builtinModules } from 'node:module';
import tseslint from 'typescript-eslint';

/** Workflow code is replayed: it must not reach the outside world. */
const workflowRestrictions = {
  paths: builtinModules.map((name) => ({
    name,
    message: 'Workflow code must be deterministic: no Node APIs in src/workflows. Move this to an activity.',
  })),
  patterns: [
    { group: ['node:*'], message: 'Workflow code must be deterministic: no Node APIs in src/workflows.' },
    {
      group: ['../activities/*', '../providers/*', '../client/*', '../worker*', 'openai', '@anthropic-ai/*', '@temporalio/client', '@temporalio/worker', '@temporalio/activity'],
      allowTypeImports: true,
      message: 'Workflow code may import src/core and @temporalio/workflow only (types excepted).',
    },
  ],
};

export default tseslint.config(
  // test/fixtures/consumer is a user's project: it imports the packed `keel`, which only exists there.
  { ignores: ['node_modules/', 'dist/', '.temporal/', 'coverage/', 'test/fixtures/consumer/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
    },
  },
  {
    files: ['src/workflows/**/*.ts'],
    rules: { 'no-restricted-imports': 'off', '@typescript-eslint/no-restricted-imports': ['error', workflowRestrictions] },
  },
  {
    files: ['src/core/**/*.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          paths: builtinModules.map((name) => ({ name, message: 'src/core is pure: no Node APIs.' })),
          patterns: [{ group: ['node:*'], message: 'src/core is pure: no Node APIs.' }],
        },
      ],
    },
  },
  {
    files: ['**/*.js'],
    languageOptions: { globals: { process: 'readonly', console: 'readonly', URL: 'readonly' } },
  },
);
