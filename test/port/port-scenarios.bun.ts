/**
 * The port scenarios (test/port/port-scenarios.ts) run on Bun, as `npm start` runs the platform:
 * options arrive as JSON in SVC_PORT_TEST, the results of both implementations go to stdout as one
 * JSON line for the Node test to assert.
 */
import { startPortFixture } from './port-fixture.ts';
import { runPortScenarios } from './port-scenarios.ts';

const options = JSON.parse(process.env.SVC_PORT_TEST ?? '{}') as { databaseUrl: string; uploadLimitBytes: number };
const fixture = await startPortFixture(options);
try {
  const results = {
    runtime: `bun ${(globalThis as { Bun?: { version: string } }).Bun?.version ?? 'absent'}`,
    'in-process': await runPortScenarios(fixture, fixture.ports['in-process']),
    http: await runPortScenarios(fixture, fixture.ports.http),
  };
  process.stdout.write(`${JSON.stringify(results)}\n`);
} finally {
  await fixture.close();
}
