/**
 * The web dashboard's build (docs/dashboard.md): `npm run build` runs
 * `vite build --config dashboard/vite.config.ts`, writing dist/dashboard, which the gateway
 * serves at /dashboard/ (src/gateway/routes/dashboard.ts). Everything is bundled into files
 * of this origin: no CDN, no inline script (the gateway's Content-Security-Policy forbids both).
 */
import { fileURLToPath } from 'node:url';
import { defaultClientConditions, defineConfig } from 'vite';
import react from '@vitejs/plugin-react';

const here = fileURLToPath(new URL('.', import.meta.url));

export default defineConfig({
  root: here,
  base: '/dashboard/',
  plugins: [react()],
  // the SDK's sources (its `agentpay-source` export condition), not its dist/: `npm ci` builds the
  // dashboard before the SDK, and src/core/errors.ts takes the error codes from agentpay-sdk/contract
  resolve: { conditions: ['agentpay-source', ...defaultClientConditions] },
  logLevel: 'warn',
  build: {
    outDir: fileURLToPath(new URL('../dist/dashboard', import.meta.url)),
    emptyOutDir: true,
    target: 'es2022',
    // one small page: no need for a separate chunk per library
    chunkSizeWarningLimit: 1000,
    // inlined assets would be data: URLs in scripts; keep every asset a file of this origin
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
  },
});
