/** One jest config for the whole workspace. swc compiles TypeScript with decorator metadata (Nest DI). */
const swc = [
  '@swc/jest',
  {
    jsc: {
      parser: { syntax: 'typescript', decorators: true },
      transform: { legacyDecorator: true, decoratorMetadata: true },
      target: 'es2022',
      keepClassNames: true,
    },
    module: { type: 'commonjs' },
    sourceMaps: 'inline',
  },
];

module.exports = {
  rootDir: __dirname,
  testEnvironment: 'node',
  transform: { '^.+\\.(t|j)s$': swc },
  moduleFileExtensions: ['ts', 'js', 'json'],
  testMatch: ['<rootDir>/test/**/*.spec.ts', '<rootDir>/libs/**/*.spec.ts', '<rootDir>/apps/**/*.spec.ts'],
  testPathIgnorePatterns: ['/node_modules/', '/dist/'],
  moduleNameMapper: {
    '^nestjs-priority-queue$': '<rootDir>/libs/priority-queue/src',
    '^nestjs-priority-queue/(.*)$': '<rootDir>/libs/priority-queue/src/$1',
  },
  globalSetup: '<rootDir>/test/support/global-setup.ts',
  testSequencer: '<rootDir>/test/support/slow-first-sequencer.js',
  testTimeout: 60_000,
  maxWorkers: 2,
};
