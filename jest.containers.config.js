/** The deploy test: the images built and the Compose stack run on a real Docker engine (npm run test:deploy). */
module.exports = {
  ...require('./jest.config'),
  roots: require('./test/suites').DOCKER_DIRS.map((dir) => `<rootDir>/${dir}`),
  testPathIgnorePatterns: ['/node_modules/'],
  testTimeout: 45 * 60_000,
};
