import { defineConfig } from 'vitest/config';

/**
 * Test files that need a fresh process: they load a library that reads the environment once, when it
 * is first imported (ink decides then whether it is in CI), so they cannot follow a file that loaded
 * it already. They are a project of their own; vitest runs each project's files in workers of their
 * own, started after the other project's are done.
 */
const FRESH_PROCESS = ['test/cli/polish-ui.test.ts'];

export default defineConfig({
  test: {
    testTimeout: 90_000, // CLI tests spawn the binary several times; generous for a loaded 2-core machine
    hookTimeout: 120_000,
    pool: 'forks',
    // vitest's default is one worker on a 2-core machine; most files wait on sockets, fsync
    // and child processes, so two workers halve the wall time (494 s -> 235 s measured here)
    maxWorkers: 2,
    minWorkers: 1,
    // Each worker runs its files one after another in one process, importing fastify, drizzle, the
    // MCP SDK and our sources once instead of once per file: collecting went from 225 s to 28 s of
    // CPU and the suite from 618 s to 416 s on this 2-core machine (CI=true, 148 files). Every file
    // starts its own gateways, databases and temp dirs and restores what it changes of process.env,
    // so nothing one file leaves behind is seen by the next. (The forks pool takes this from the
    // root config only, not per project.)
    isolate: false,
    projects: [
      {
        extends: true,
        test: { name: 'suite', include: ['test/**/*.test.ts', 'src/**/*.test.ts'], exclude: FRESH_PROCESS, globalSetup: ['test/global-setup.ts'] },
      },
      { extends: true, test: { name: 'fresh-process', include: FRESH_PROCESS } },
    ],
  },
});
