#!/usr/bin/env bash
# CI for this seller: install, unit tests, then one real purchase end to end (scripts/e2e.mjs).
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
