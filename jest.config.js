// Nest 12 is ESM-only, so tests run as ES modules (ts-jest useESM + node --experimental-vm-modules).
const transform = {
  '^.+\\.ts$': [
    'ts-jest',
    {
      useESM: true,
      tsconfig: { module: 'esnext', moduleResolution: 'bundler', isolatedModules: true },
    },
  ],
};
export const common = {
  extensionsToTreatAsEsm: ['.ts'],
  moduleNameMapper: {
    '^(\\.{1,2}/.*)\\.js$': '$1',
    // package.json "imports": #<lib>/<path>.js is libs/<lib>/src/<path>.ts
    '^#([a-z-]+)/(.*)\\.js$': '<rootDir>/libs/$1/src/$2',
  },
  transform,
  testEnvironment: 'node',
};

export default {
  projects: [
    { ...common, displayName: 'unit', testMatch: ['<rootDir>/libs/**/*.spec.ts', '<rootDir>/apps/**/*.spec.ts'] },
    {
      ...common,
      displayName: 'e2e',
      testMatch: ['<rootDir>/test/**/*.e2e-spec.ts'],
      globalSetup: '<rootDir>/test/global-setup.mjs',
      globalTeardown: '<rootDir>/test/global-teardown.mjs',
      setupFilesAfterEnv: ['<rootDir>/test/quiet-nest.ts'],
    },
  ],
  // Three workers on two cores: many suites wait on timers, child processes and the browser
  // (measured: the suite without the browser files took 287 s with two, 244 s with three).
  maxWorkers: 3,
  // e2e tests start servers and child processes; on 2 busy cores 5 s is too tight.
  testTimeout: 30000,
};
