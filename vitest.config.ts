import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    // The Temporal native bridge is not safe in worker threads.
    pool: 'forks',
    include: ['test/**/*.test.ts'],
    // Build dist/ first (the CLI and package tests run it), then start the dev server.
    globalSetup: ['test/support/build.ts', 'test/support/global-setup.ts'],
    // Every test process drops the shell's provider, keel and Temporal settings first.
    setupFiles: ['test/support/clean-env.ts'],
    testTimeout: 60_000,
    hookTimeout: 180_000,
  },
});
