import { buildClient } from '../../cli/scripts/build.ts';

/**
 * Global setup: compiles the client once per test run, so that the tests run the `svc` a user runs
 * (`cli/bin/svc.js` loads `cli/dist/svc.mjs`) and a fresh clone needs no build step first. Each
 * vitest project runs its global setup in this same process: the first one builds, the others wait for it.
 */
export async function setup(): Promise<void> {
  const run = globalThis as { svcClientBuild?: Promise<unknown> };
  await (run.svcClientBuild ??= buildClient());
}
