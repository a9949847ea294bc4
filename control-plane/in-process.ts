import type { Services } from './trpc/context.ts';
import type { ControlPlane } from './trpc/control-plane.ts';
import { createCaller } from './trpc/root-router.ts';

type AnyCaller = Record<string, Record<string, (input: unknown) => Promise<unknown>>>;

/** The control plane called in the same process: one tRPC caller per call, no serialisation. */
export function createInProcessControlPlane(services: Services): ControlPlane {
  const call = (context: Parameters<ControlPlane['query']>[0], domain: string, procedure: string, input: unknown) => {
    const caller = createCaller({ services, identity: context.identity, tenantHint: context.tenantHint }) as unknown as AnyCaller;
    return caller[domain]![procedure]!(input);
  };
  return { query: call, mutation: call } as ControlPlane;
}
