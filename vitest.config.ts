import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    // The Temporal native bridge is not safe in worker threads.
    pool: 'forks',
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/support/global-setup.ts'],
    testTimeout: 60_000,
    hookTimeout: 180_000,
  },
});
