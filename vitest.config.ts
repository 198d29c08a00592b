import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts', 'src/**/*.test.ts'],
    testTimeout: 90_000, // CLI tests spawn the binary several times; generous for a loaded 2-core machine
    hookTimeout: 120_000,
    pool: 'forks',
    // vitest's default is one worker on a 2-core machine; most files wait on sockets, fsync
    // and child processes, so two workers halve the wall time (494 s -> 235 s measured here)
    maxWorkers: 2,
    minWorkers: 1,
    globalSetup: ['test/global-setup.ts'],
  },
});
