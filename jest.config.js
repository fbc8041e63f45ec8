/** Jest: TypeScript through SWC (type checking is `npm run typecheck`), one shared Temporal dev server and database. */
module.exports = {
  testEnvironment: 'node',
  transform: { '^.+\\.(t|j)sx?$': ['@swc/jest', { jsc: { target: 'es2022' }, module: { type: 'commonjs' } }] },
  testMatch: ['<rootDir>/test/**/*.test.ts'],
  testPathIgnorePatterns: ['/node_modules/', '/test/fixtures/'],
  // The official LangGraph JS client requires these ESM-only packages from CommonJS; SWC compiles them for jest.
  transformIgnorePatterns: ['/node_modules/(?!(p-retry|is-network-error|p-queue|p-timeout)/)(?!.*/node_modules/)'],
  modulePathIgnorePatterns: ['<rootDir>/test/fixtures/', '<rootDir>/data/', '<rootDir>/.test-data/'],
  setupFiles: ['<rootDir>/test/support/quietTemporal.ts'],
  globalSetup: '<rootDir>/test/support/globalSetup.ts',
  globalTeardown: '<rootDir>/test/support/globalTeardown.ts',
  testTimeout: 120_000,
  forceExit: false,
};
