import { defineConfig } from 'drizzle-kit';

// Used only by `npm run db:generate` to write new migrations; applying them is `loopfleet migrate`.
export default defineConfig({
  dialect: 'postgresql',
  schema: './src/store/schema/index.ts',
  out: './src/store/migrations',
});
