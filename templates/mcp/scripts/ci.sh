#!/usr/bin/env bash
# CI for this MCP seller: install, unit tests, then real purchases end to end (scripts/e2e.mjs):
# one tool call over streamable HTTP and one over stdio, against a local sandbox gateway.
# Needs Node 20+ and npm; no network beyond the npm registry, no external gateway.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ -f package-lock.json ]; then
  npm ci --no-audit --no-fund
else
  npm install --no-audit --no-fund
fi
npm test
npm run e2e
