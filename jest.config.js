/** Jest: TypeScript through SWC (type checking is `npm run typecheck`), one shared Temporal dev server and database. */
module.exports = {
  // Node's environment that also stops stacks a test file left running (see the file).
  testEnvironment: '<rootDir>/test/support/testEnvironment.js',
  transform: { '^.+\\.(t|j)sx?$': ['@swc/jest', { jsc: { target: 'es2022' }, module: { type: 'commonjs' } }] },
  testMatch: ['<rootDir>/test/**/*.test.ts', '<rootDir>/packages/*/test/**/*.test.ts'],
  testPathIgnorePatterns: ['/node_modules/', '/test/fixtures/'],
  // The official LangGraph JS client requires these ESM-only packages from CommonJS; SWC compiles them for jest.
  transformIgnorePatterns: [
    '/node_modules/(?!(p-retry|is-network-error|p-queue|p-timeout|@kubernetes/client-node|openid-client|oauth4webapi|jose|jsonpath-plus|rfc4648)/)(?!.*/node_modules/)',
  ],
  modulePathIgnorePatterns: ['<rootDir>/test/fixtures/', '<rootDir>/data/', '<rootDir>/.test-data/'],
  setupFiles: ['<rootDir>/test/support/quietTemporal.ts'],
  setupFilesAfterEnv: ['<rootDir>/test/support/retryOnce.ts'],
  globalSetup: '<rootDir>/test/support/globalSetup.ts',
  globalTeardown: '<rootDir>/test/support/globalTeardown.ts',
  testTimeout: 120_000,
  // A handle a test leaks must not hold a finished run open until CI's time limit (the results are printed by then).
  forceExit: true,
};
