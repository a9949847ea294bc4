/**
 * A control-plane HTTP server in a process of its own (Node or Bun), so that a test can read the
 * server's memory apart from the client's: options arrive as JSON in SVC_PORT_TEST; its URL, the credential it
 * requires, a token of acme's administrator and its pid go to stdout as one JSON line; SIGTERM stops it.
 */
import { startPortFixture } from './port-fixture.ts';

// Young garbage (the upload's chunks) is collected every 100 ms on Node started with --expose-gc,
// so that the peak memory a test reads counts what the server holds rather than what a collector
// starved of CPU on a loaded machine has yet to free.
const gc = (globalThis as { gc?: (options: { type: 'minor' }) => void }).gc;
if (gc) setInterval(() => gc({ type: 'minor' }), 100).unref();

const options = JSON.parse(process.env.SVC_PORT_TEST ?? '{}') as { databaseUrl: string; uploadLimitBytes: number };
const fixture = await startPortFixture(options);
const { token } = await fixture.as('admin@acme.test');
process.stdout.write(`${JSON.stringify({ url: fixture.url, callerToken: fixture.callerToken, token, pid: process.pid })}\n`);
process.once('SIGTERM', () => void fixture.close().finally(() => process.exit(0)));
