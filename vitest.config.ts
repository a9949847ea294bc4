import { defineConfig } from 'vitest/config';

/**
 * Two projects: every test with the control plane in-process, and the REST end-to-end suites
 * again with the edge calling the control plane over tRPC's HTTP link.
 */
export default defineConfig({
  test: {
    globalSetup: ['test/harness/global-setup.ts'],
    exclude: ['**/node_modules/**', '.git/**', '.scratch/**'],
    testTimeout: 30_000,
    hookTimeout: 120_000,
    pool: 'forks',
    fileParallelism: true,
    maxWorkers: 2,
    projects: [
      {
        extends: true,
        test: { name: 'in-process', include: ['**/*.test.ts'], provide: { controlPlaneMode: 'in-process' } },
      },
      {
        extends: true,
        test: { name: 'http-link', include: ['test/e2e/**/*.test.ts'], provide: { controlPlaneMode: 'http' } },
      },
    ],
  },
});
