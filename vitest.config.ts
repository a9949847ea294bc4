import { defineConfig } from 'vitest/config';

/**
 * Three projects: every test with the control plane in-process; the REST end-to-end suites again
 * with the edge calling the control plane over tRPC's HTTP link; and again with the edge and its
 * control plane in a Bun process, as `npm start` runs them.
 */
export default defineConfig({
  test: {
    globalSetup: ['test/harness/global-setup.ts', 'test/cli/build-client.ts'],
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
      {
        extends: true,
        test: { name: 'bun-edge', include: ['test/e2e/**/*.test.ts'], provide: { controlPlaneMode: 'bun' } },
      },
    ],
  },
});
