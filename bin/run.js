#!/usr/bin/env node
import { execute } from '@oclif/core';
import { fileURLToPath } from 'node:url';
import { setFlagsFromString } from 'node:v8';

// A command that talks to a gateway parses its answers with undici's HTTP parser, a WebAssembly module.
// V8 runs it as baseline code (Liftoff) at once and compiles it again, optimised, on a background thread;
// a process cannot exit before that compile ends: 150 to 400 ms of CPU and waiting at the end of every
// command (docs/performance.md, "The CLI's start and end"). Baseline code parses a few answers well
// enough; the commands that serve (dev, gateway, demo, proxy, listen, mcp) keep V8's default.
const SERVES = new Set(['dev', 'gateway', 'demo', 'proxy', 'listen', 'mcp']);
if (!SERVES.has(process.argv[2] ?? '')) setFlagsFromString('--liftoff-only');

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
