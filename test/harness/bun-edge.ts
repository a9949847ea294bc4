/**
 * The edge with its in-process control plane, started on Bun for the `bun-edge` test project (as
 * `npm start` runs it): the platform options arrive as JSON in SVC_TEST_PLATFORM, the URL goes to
 * stdout as one JSON line, and SIGTERM closes the platform.
 */
import { startPlatform, type PlatformOptions } from '../../control-plane/app/platform.ts';

const options = JSON.parse(process.env.SVC_TEST_PLATFORM ?? '{}') as PlatformOptions;
const platform = await startPlatform({ ...options, role: 'all', runWorker: false, log: (message, detail) => console.error(message, detail ?? '') });
process.stdout.write(`${JSON.stringify({ url: platform.url })}\n`);
process.once('SIGTERM', () => void platform.close().finally(() => process.exit(0)));
