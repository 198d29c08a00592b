import { defineConfig } from 'drizzle-kit';

/** The PostgreSQL migrations (`npm run db:generate:pg`); the SQLite ones are drizzle.config.ts's. */
export default defineConfig({
  dialect: 'postgresql',
  schema: './src/store/schema-pg/index.ts',
  out: './drizzle-pg',
});
