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
      'packages/runtime/test/upstream/vendor/**',
      'packages/runtime/src/staticSchemas/vendor/**',
      'packages/*/dist/**',
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
    settings: {
      'import/resolver': {
        typescript: { project: './tsconfig.json' },
        node: { extensions: ['.ts', '.js'] },
      },
    },
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
  // Fences (docs/decisions.md "Packages and fences"). Zones name what a folder may not reach, by path, so a new folder
  // is fenced without editing a list; package manifests name the npm packages each package may import. The TypeScript
  // resolver follows the workspace packages' `exports`, so `@graphx/*` imports are checked like relative ones.
  {
    files: ['**/*.ts'],
    rules: {
      'import/no-restricted-paths': [
        'error',
        {
          zones: [
            {
              target: './packages/runtime/src',
              from: ['./src', './activities', './workflows', './bin'],
              message:
                'The runtime is its own deployable: it depends on @graphx/contract and @graphx/kit, never on the control plane.',
            },
            {
              target: './packages/kit/src',
              from: ['./src', './activities', './workflows', './packages/runtime', './packages/contract'],
              message: 'The kit is shared by every server and depends on none of them.',
            },
            {
              target: './packages/contract/src',
              from: ['./src', './activities', './workflows', './packages/runtime', './packages/kit'],
              message: 'The contract is pure: it states promises and imports nothing of ours.',
            },
            {
              target: './src/db',
              from: './src',
              except: ['./db', './config', './security'],
              message: 'src/db imports nothing above it: only src/config, src/security and the kit and contract packages.',
            },
            {
              target: './src/db',
              from: ['./activities', './workflows', './packages/runtime'],
              message: 'src/db imports nothing above it.',
            },
            {
              target: './activities',
              from: './src/targets',
              except: ['./target.ts'],
              message: 'Activities reach a target only through its port (src/targets/target.ts); the composition root picks one.',
            },
            {
              target: './activities',
              from: './src/builders',
              except: ['./builder.ts'],
              message:
                'Activities reach a builder only through its port (src/builders/builder.ts); the composition root picks one.',
            },
            {
              target: ['./src/builders', './src/targets'],
              from: ['./activities', './workflows', './src/api', './src/cli'],
              message:
                'Builders and targets are ports the activities call: they know nothing of Temporal activities, workflows, the API or the CLI.',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['packages/runtime/src/**/*.ts'],
    rules: { 'import/no-extraneous-dependencies': ['error', { packageDir: ['./packages/runtime'] }] },
  },
  {
    files: ['packages/kit/src/**/*.ts'],
    rules: { 'import/no-extraneous-dependencies': ['error', { packageDir: ['./packages/kit'] }] },
  },
  {
    files: ['packages/contract/src/**/*.ts'],
    rules: { 'import/no-extraneous-dependencies': ['error', { packageDir: ['./packages/contract'] }] },
  },
  // Size limits (docs/decisions.md "Size limits"): a file or function past them is asking to be split by responsibility.
  {
    files: [
      'src/**/*.ts',
      'activities/**/*.ts',
      'workflows/**/*.ts',
      'packages/kit/src/**/*.ts',
      'packages/contract/src/**/*.ts',
      'packages/runtime/src/**/*.ts',
    ],
    rules: {
      'max-lines': ['error', { max: 300, skipBlankLines: true, skipComments: true }],
      'max-lines-per-function': ['error', { max: 60, skipBlankLines: true, skipComments: true }],
    },
  },
  // Route declarations: one registering function lists a resource's routes, each handler a short sentence of calls.
  {
    files: ['**/routes/*.ts', 'src/cli/ciCommands.ts'],
    rules: { 'max-lines-per-function': 'off' },
  },
  // Composition roots: they wire every part together in order, which reads best as one function.
  {
    files: ['src/stack.ts', 'src/worker/index.ts', 'packages/runtime/src/server.ts'],
    rules: { 'max-lines-per-function': 'off' },
  },
  // Migrations: a schema change is one transaction of table definitions, never edited once released.
  {
    files: ['src/db/migrations/**/*.ts'],
    rules: { 'max-lines': 'off', 'max-lines-per-function': 'off' },
  },
  // Kubernetes object builders: each returns one object literal, the manifest as Kubernetes documents it.
  {
    files: ['src/targets/kubernetes/objects/**/*.ts'],
    rules: { 'max-lines-per-function': 'off' },
  },
);
