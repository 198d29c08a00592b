#!/usr/bin/env node
import { execute } from '@oclif/core';
import { fileURLToPath } from 'node:url';

// Refresh oclif's command manifest after a build (see src/cli/manifest.ts): with it a run
// imports only the command it runs. Any failure here leaves oclif to find the commands itself.
try {
  const { isManifestStale, writeManifest } = await import('../dist/src/cli/manifest.js');
  const root = fileURLToPath(new URL('..', import.meta.url));
  if (isManifestStale(root)) await writeManifest(root);
} catch {
  // not built yet, or a read-only install: slower, not broken
}

await execute({ dir: import.meta.url });
