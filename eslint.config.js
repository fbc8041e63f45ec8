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
      'test/upstream/vendor/**',
      'src/runtime/staticSchemas/vendor/**',
      'coverage/**',
      'dist/**',
      'packages/*/dist/**',
      'packages/*/dist.*/**',
      'eslint.config.js',
      'jest.config.js',
    ],
  },
  ...tseslint.configs.recommended,
  { rules: { '@typescript-eslint/no-require-imports': 'off' } },
  {
    files: ['**/*.ts'],
    ignores: ['packages/console/**'],
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
  // The web console is a browser build with its own tsconfig (DOM, JSX); it reaches graphx only over HTTP.
  {
    files: ['packages/console/**/*.ts', 'packages/console/**/*.tsx'],
    languageOptions: {
      parserOptions: { project: './packages/console/tsconfig.json', tsconfigRootDir: __dirname },
    },
    plugins: { import: importPlugin },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'import/no-cycle': ['error', { maxDepth: 5 }],
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['**/src/*', '../../../src/**', '**/workflows/**', '**/activities/**'],
              message: 'The console depends on public HTTP APIs only, never on the control plane or runtime sources.',
            },
          ],
        },
      ],
    },
    settings: { 'import/resolver': { node: { extensions: ['.ts', '.tsx', '.js'] } } },
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
  // Layering fences (issue 9): the deployed runtime is a sibling of the control plane, the pipeline's steps reach a
  // target only through its port, and the database layer imports nothing above it.
  {
    files: ['src/runtime/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['**/api', '**/api/*', '**/api/**'],
              message: 'The runtime is a sibling of the control plane: import the shared kit from src/http, never src/api.',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['activities/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['**/targets/local', '**/targets/local/*', '**/targets/local/**'],
              message:
                'Activities reach a target only through src/targets/target.ts (the worker composition root wires LocalTarget).',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['src/db/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: [
                '**/src/api',
                '**/src/api/**',
                '../api',
                '../api/**',
                '../../api',
                '../../api/**',
                '**/src/http',
                '**/src/http/**',
                '../http',
                '../http/**',
                '../../http',
                '../../http/**',
                '**/src/deployments',
                '**/src/deployments/**',
                '../deployments',
                '../deployments/**',
                '../../deployments',
                '../../deployments/**',
                '**/src/auth',
                '**/src/auth/**',
                '../auth',
                '../auth/**',
                '../../auth',
                '../../auth/**',
                '**/src/runtime',
                '**/src/runtime/**',
                '../runtime',
                '../runtime/**',
                '../../runtime',
                '../../runtime/**',
                '**/src/targets',
                '**/src/targets/**',
                '../targets',
                '../targets/**',
                '../../targets',
                '../../targets/**',
                '**/src/pipeline',
                '**/src/pipeline/**',
                '../pipeline',
                '../pipeline/**',
                '../../pipeline',
                '../../pipeline/**',
                '**/src/worker',
                '**/src/worker/**',
                '../worker',
                '../worker/**',
                '../../worker',
                '../../worker/**',
                '**/src/cli',
                '**/src/cli/**',
                '../cli',
                '../cli/**',
                '../../cli',
                '../../cli/**',
                '**/src/stack',
                '**/src/stack/**',
                '../stack',
                '../stack/**',
                '../../stack',
                '../../stack/**',
                '**/src/bootstrap',
                '**/src/bootstrap/**',
                '../bootstrap',
                '../bootstrap/**',
                '../../bootstrap',
                '../../bootstrap/**',
                '**/src/tracing',
                '**/src/tracing/**',
                '../tracing',
                '../tracing/**',
                '../../tracing',
                '../../tracing/**',
                '**/src/temporal',
                '**/src/temporal/**',
                '../temporal',
                '../temporal/**',
                '../../temporal',
                '../../temporal/**',
                '**/src/os',
                '**/src/os/**',
                '../os',
                '../os/**',
                '../../os',
                '../../os/**',
                '**/activities/**',
              ],
              message:
                'src/db imports nothing above it: only leaves (src/errors, src/security, src/config, src/logger, src/net, workflows/messages).',
            },
          ],
        },
      ],
    },
  },
);
