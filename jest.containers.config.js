/**
 * The deploy test: the images built and the Compose stack run on a real Docker engine (npm run test:deploy).
 * The image is built once (build-images.ts); then the two stacks, one Redis and a Redis Cluster, run side by
 * side, each in its own worker: most of their time goes in waiting for containers and a polite crawl.
 */
module.exports = {
  ...require('./jest.config'),
  roots: require('./test/suites').DOCKER_DIRS.map((dir) => `<rootDir>/${dir}`),
  testPathIgnorePatterns: ['/node_modules/'],
  globalSetup: '<rootDir>/test/containers/build-images.ts',
  maxWorkers: 2,
  testTimeout: 45 * 60_000,
};
