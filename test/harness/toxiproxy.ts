import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { ensureToxiproxy } from '../../scripts/stack/toxiproxy.ts';
import { freePort, tail } from '../../scripts/stack/process.ts';
import { until } from './until.ts';

/** The toxics this harness uses, with the attributes toxiproxy documents for each (times in ms, rates in KB/s). */
export type Toxic =
  | { type: 'latency'; attributes: { latency: number; jitter?: number } }
  | { type: 'bandwidth'; attributes: { rate: number } }
  | { type: 'reset_peer'; attributes: { timeout: number } }
  /** `timeout: 0` is a blackhole: data is dropped and the connection stays open until the toxic is removed. */
  | { type: 'timeout'; attributes: { timeout: number } };

/** A path whose data is dropped while the connection stays open. */
export const BLACKHOLE: Toxic = { type: 'timeout', attributes: { timeout: 0 } };
/** A path whose connections are reset at once. */
export const RESET: Toxic = { type: 'reset_peer', attributes: { timeout: 0 } };
/** The two ways a path goes away, by name: what the fault tests try in turn. */
export const PATH_CUTS: Array<[string, Toxic]> = [
  ['blackholed', BLACKHOLE],
  ['reset', RESET],
];

export interface Proxy {
  name: string;
  /** `127.0.0.1:<port>`: connect here instead of the upstream. */
  listen: string;
  upstream: string;
  /** Adds a toxic in both directions (one per direction, named `<name>-up`/`<name>-down`). */
  add(name: string, toxic: Toxic): Promise<void>;
  /** Removes a toxic added with {@link add}. */
  remove(name: string): Promise<void>;
}

export interface Toxiproxy {
  /** The API's base URL. */
  url: string;
  /** Creates a proxy listening on a free port of 127.0.0.1 and forwarding to `upstream` (`host:port`). */
  proxy(name: string, upstream: string): Promise<Proxy>;
  /** Stops the server; every proxied connection is closed. */
  close(): Promise<void>;
}

/**
 * Starts a `toxiproxy-server` of this test's own on a free port (built from its Go module on first
 * use), and drives it through its HTTP API (https://github.com/Shopify/toxiproxy#http-api).
 */
export async function startToxiproxy(): Promise<Toxiproxy> {
  const server = await ensureToxiproxy({ log: (msg) => process.stderr.write(`[toxiproxy] ${msg}\n`) });
  const port = await freePort();
  const child = spawn(server, ['-host', '127.0.0.1', '-port', String(port)], { stdio: ['ignore', 'ignore', 'pipe'] });
  let output = '';
  child.stderr.on('data', (chunk) => (output = tail(output + chunk, 40)));
  const exited = once(child, 'exit');
  const url = `http://127.0.0.1:${port}`;
  await until(
    async () => {
      if (child.exitCode !== null) throw new Error(`toxiproxy-server exited (${child.exitCode}): ${output}`);
      return (await fetch(`${url}/version`)).ok;
    },
    (ok) => ok,
    15_000,
  );

  const api = async (method: string, path: string, body?: unknown) => {
    const response = await fetch(url + path, { method, headers: { 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
    if (!response.ok) throw new Error(`toxiproxy ${method} ${path} answered ${response.status}: ${await response.text()}`);
    return response.status === 204 ? undefined : ((await response.json()) as Record<string, unknown>);
  };

  return {
    url,
    async proxy(name, upstream) {
      const listen = `127.0.0.1:${await freePort()}`;
      await api('POST', '/proxies', { name, listen, upstream, enabled: true });
      return {
        name,
        listen,
        upstream,
        async add(toxic, { type, attributes }) {
          for (const stream of ['upstream', 'downstream'] as const) {
            await api('POST', `/proxies/${name}/toxics`, { name: `${toxic}-${stream === 'upstream' ? 'up' : 'down'}`, type, stream, toxicity: 1, attributes });
          }
        },
        async remove(toxic) {
          for (const suffix of ['up', 'down']) await api('DELETE', `/proxies/${name}/toxics/${toxic}-${suffix}`);
        },
      };
    },
    async close() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}
