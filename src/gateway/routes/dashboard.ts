/**
 * The web dashboard (docs/dashboard.md): the static files `npm run build` puts in
 * dist/dashboard (dashboard/vite.config.ts), served as they are. The page holds no secret
 * of the gateway's: it calls the /v1 API with the key of whoever signed in, so it sees
 * what that key's scopes allow and nothing more. Public routes (the files are the same for
 * everyone); plain HTTP is refused before them like everywhere (plugins/transport.ts).
 *
 * Only files under the build folder are served: a path is resolved segment by segment,
 * with no `..`, `.` or empty segment, no backslash or NUL, and must stay inside the folder.
 * Every answer carries a Content-Security-Policy that admits scripts, styles and
 * connections from this origin only (the build has no inline script or style).
 */
import { readFile, realpath, stat } from 'node:fs/promises';
import { extname, join, resolve, sep } from 'node:path';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { AppError } from '../../core/errors.js';
import { packageRoot } from '../../paths.js';

/** Where the build writes the dashboard, relative to the package root. */
export const DASHBOARD_DIR = join('dist', 'dashboard');

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.webp': 'image/webp',
  '.woff2': 'font/woff2',
  '.txt': 'text/plain; charset=utf-8',
};

export const DASHBOARD_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

/** The file a request path names inside `root`, or undefined if the path may not name one. */
export function dashboardFile(root: string, requested: string): string | undefined {
  if (requested === '') return join(root, 'index.html');
  if (requested.length > 300 || /[\\\0]/.test(requested)) return undefined;
  const segments = requested.split('/');
  if (segments.some((s) => s === '' || s === '.' || s === '..')) return undefined;
  const file = resolve(root, ...segments);
  return file.startsWith(root + sep) ? file : undefined;
}

function notFound(path: string): AppError {
  return new AppError('NOT_FOUND', `/dashboard/${path} is not a file of the dashboard; open /dashboard/`, { path: `/dashboard/${path}` });
}

export interface DashboardOptions {
  /** the built folder; tests pass another (default: DASHBOARD_DIR in the package) */
  root?: string;
}

export default async function dashboardRoutes(app: FastifyInstance, opts: DashboardOptions = {}) {
  const root = resolve(opts.root ?? join(packageRoot(), DASHBOARD_DIR));
  // static files (HTML, JS, CSS), not API: left out of the OpenAPI document (hide)
  const config = { public: true, errors: ['NOT_FOUND'] } as const;
  const schema = { hide: true };

  /** The file itself, if it is a file whose real path (links followed) is inside the real root. */
  async function servable(file: string): Promise<string | undefined> {
    const info = await stat(file).catch(() => undefined);
    if (!info?.isFile()) return undefined;
    const [realRoot, realFile] = await Promise.all([realpath(root), realpath(file)]);
    return realFile.startsWith(realRoot + sep) ? realFile : undefined;
  }

  async function send(reply: FastifyReply, requested: string) {
    const named = dashboardFile(root, requested);
    if (!named) throw notFound(requested);
    const file = await servable(named);
    if (!file) {
      if (requested === '') {
        throw new AppError('SERVICE_UNAVAILABLE', `the dashboard is not built in this installation (no ${join(DASHBOARD_DIR, 'index.html')}); run npm run build`);
      }
      throw notFound(requested);
    }
    const body = await readFile(file);
    // the build names its assets by their content hash: they never change under one name
    const immutable = requested.startsWith('assets/');
    return reply
      .header('content-type', CONTENT_TYPES[extname(named).toLowerCase()] ?? 'application/octet-stream')
      .header('content-security-policy', DASHBOARD_CSP)
      .header('x-content-type-options', 'nosniff')
      .header('referrer-policy', 'no-referrer')
      .header('x-frame-options', 'DENY')
      .header('cache-control', immutable ? 'public, max-age=31536000, immutable' : 'no-cache')
      .send(body);
  }

  app.get('/dashboard', { config, schema }, async (_request, reply) => send(reply, ''));
  app.get<{ Params: { '*': string } }>('/dashboard/*', { config, schema }, async (request, reply) => send(reply, request.params['*']));
}
