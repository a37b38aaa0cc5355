/** The unit tests: every spec that needs no Redis, PostgreSQL, S3 or Chromium (test/suites.js says which do). */
const { E2E_DIRS, NEEDS_INFRASTRUCTURE } = require('./test/suites');

const literal = (path) => path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
module.exports = {
  ...require('./jest.config'),
  testPathIgnorePatterns: [
    ...require('./jest.config').testPathIgnorePatterns,
    ...E2E_DIRS.map((dir) => `<rootDir>/${literal(dir)}/`),
    ...NEEDS_INFRASTRUCTURE.map((file) => `<rootDir>/${literal(file)}$`),
  ],
};
