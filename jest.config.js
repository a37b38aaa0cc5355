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
  // One file at a time: the distributed e2e files each run a dozen processes (services, S3 server, test web),
  // and two of them at once on a 2-core machine starve each other past the readiness probes' time limits.
  maxWorkers: 1,
  // After the whole run (one process: maxWorkers 1 runs the files in band) some handle left by a test kept the
  // process alive and CI waited for ever; every test has finished and reported by then. Without it, the files
  // outside test/e2e and test/deploy ran together and jest exited on its own; one e2e leak was found and closed
  // (a test cluster whose start failed left its S3 server and services running). The rest of test/e2e, and
  // test/deploy, are still to be run that way before this can go.
  forceExit: true,
};
