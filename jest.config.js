/** Unit, adapter-contract and end-to-end tests; sources run through swc (decorator metadata on). */
const swc = JSON.parse(require('fs').readFileSync(`${__dirname}/.swcrc`, 'utf8'));
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/libs', '<rootDir>/apps', '<rootDir>/test'],
  testMatch: ['**/*.spec.ts', '**/*.test.ts'],
  transform: { '^.+\\.ts$': ['@swc/jest', { ...swc, swcrc: false }] },
  moduleNameMapper: { '^@crawler/([^/]+)$': '<rootDir>/libs/$1/src' },
  testTimeout: 30000,
  maxWorkers: 2,
};
