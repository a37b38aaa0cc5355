/** Unit, adapter-contract and end-to-end tests; sources run through swc (decorator metadata on). */
const swc = JSON.parse(require('node:fs').readFileSync(`${__dirname}/.swcrc`, 'utf8'));
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/libs', '<rootDir>/apps', '<rootDir>/test'],
  testMatch: ['**/*.spec.ts', '**/*.test.ts'],
  // The deploy test on a Docker engine runs on its own: npm run test:deploy (jest.containers.config.js).
  testPathIgnorePatterns: ['/node_modules/', ...require('./test/suites').DOCKER_DIRS.map((dir) => `<rootDir>/${dir}/`)],
  transform: { '^.+\\.ts$': ['@swc/jest', { ...swc, swcrc: false }] },
  moduleNameMapper: {
    '^@crawler/([^/]+)/testing$': '<rootDir>/libs/$1/src/testing',
    '^@crawler/([^/]+)/settings$': '<rootDir>/libs/$1/src/$1.settings',
    '^@crawler/([^/]+)$': '<rootDir>/libs/$1/src',
  },
  testTimeout: 30000,
  // One file at a time in a run: the distributed e2e files each run a dozen processes (services, S3 server, test
  // web), and several of them at once on a 2-core machine starve each other past the readiness probes' limits.
  // `npm test` runs two such runs side by side instead (test/run-all.js), one of them the longest e2e files.
  maxWorkers: 1,
  // No forceExit: a test that leaves a server, socket, child or timer open keeps jest from exiting, and the
  // teardown names what it left so that the test can be found (`npm test` fails a lane that does not exit).
  globalTeardown: '<rootDir>/test/support/report-open-handles.ts',
};
