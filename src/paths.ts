import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The package's root (where package.json is), from src/ or dist/src/ alike. */
export function packageRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    if (existsSync(join(dir, 'package.json')) && existsSync(join(dir, 'drizzle'))) return dir;
    const up = dirname(dir);
    if (up === dir) throw new Error('agentpay: package root not found');
    dir = up;
  }
}

export const migrationsDir = (): string => join(packageRoot(), 'drizzle');

/** The PostgreSQL migrations (drizzle.pg.config.ts). */
export const pgMigrationsDir = (): string => join(packageRoot(), 'drizzle-pg');
