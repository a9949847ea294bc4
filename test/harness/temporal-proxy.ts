import { inject } from 'vitest';
import { startTestStack, type TestStack } from './stack.ts';
import type { Proxy, Toxiproxy } from './toxiproxy.ts';

/**
 * A test stack whose processes reach the run's Temporal only through `toxiproxy`'s proxy named
 * `temporal`, so that a test can slow or cut that path. `temporal` is the run's Temporal itself,
 * for reading workflow runs past the proxy.
 */
export async function startStackBehindTemporalProxy(
  toxiproxy: Toxiproxy,
  options: Omit<NonNullable<Parameters<typeof startTestStack>[0]>, 'temporal'> = {},
): Promise<{ temporal: { address: string; namespace: string }; proxy: Proxy; stack: TestStack }> {
  const temporal = { address: inject('temporalAddress'), namespace: inject('temporalNamespace') };
  const proxy = await toxiproxy.proxy('temporal', temporal.address);
  const stack = await startTestStack({ ...options, temporal: { address: proxy.listen, namespace: temporal.namespace } });
  return { temporal, proxy, stack };
}
