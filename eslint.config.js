// ESLint (flat config): TypeScript rules for the whole tree, and a fence around workflows/ so that workflow code can
// only import what is deterministic (a mistake fails lint instead of failing at bundle time or replay).
const tseslint = require('typescript-eslint');
const importPlugin = require('eslint-plugin-import');
const { builtinModules } = require('node:module');

module.exports = tseslint.config(
  {
    ignores: [
      'node_modules/**',
      'data/**',
      '.test-data/**',
      '.temporal-cli/**',
      'test/fixtures/**',
      'coverage/**',
      'eslint.config.js',
      'jest.config.js',
    ],
  },
  ...tseslint.configs.recommended,
  { rules: { '@typescript-eslint/no-require-imports': 'off' } },
  {
    files: ['**/*.ts'],
    languageOptions: { parserOptions: { project: './tsconfig.json', tsconfigRootDir: __dirname } },
    plugins: { import: importPlugin },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-require-imports': 'off',
      'import/no-cycle': ['error', { maxDepth: 5 }],
    },
    settings: { 'import/resolver': { node: { extensions: ['.ts', '.js'] } } },
  },
  {
    files: ['workflows/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [
            ...builtinModules.flatMap((name) => [name, `node:${name}`]),
            'knex',
            'pg',
            'koa',
            '@koa/router',
            '@temporalio/client',
            '@temporalio/worker',
            '@temporalio/activity',
          ].map((name) => ({ name, message: 'Workflow code must be deterministic: no I/O, no Node built-ins, no clients.' })),
          patterns: [
            {
              group: ['../src/*', '../src/**'],
              message: 'Workflows import only @temporalio/workflow, ./messages and activity types.',
            },
            { group: ['../activities/*'], allowTypeImports: true, message: 'Only `import type` from activities/.' },
          ],
        },
      ],
    },
  },
);
