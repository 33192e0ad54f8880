import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: 'unit',
          include: ['test/unit/**/*.test.ts'],
          environment: 'node',
          setupFiles: ['test/support/leak-check.ts'],
        },
      },
      {
        test: {
          name: 'integration',
          include: ['test/integration/**/*.test.ts'],
          environment: 'node',
          globalSetup: ['test/support/global-setup.ts'],
          setupFiles: ['test/support/leak-check.ts'],
          testTimeout: 60_000,
          hookTimeout: 60_000,
          // Files run in parallel: each one gets its own database and queue names (test/support).
          fileParallelism: true,
        },
      },
    ],
  },
});
