import { callTRPCProcedure } from '@trpc/server';
import type { CallContext, ControlPlane } from './control-plane.ts';
import { appRouter } from './root-router.ts';
import type { NarrowApiServices } from './services.ts';
import { detachedByteStream } from '../trpc/upload-body.ts';

type Procedures = Record<string, { _def: { type: 'query' | 'mutation' | 'subscription' } } | undefined>;

/**
 * A subscription's values from the in-process caller. Leaving the loop (or `signal`) aborts the
 * procedure's own signal before asking its generator to return: a generator waiting for its next
 * value (not at a `yield`) would otherwise not see the request until it yields again.
 */
function subscribe(start: (signal: AbortSignal) => Promise<unknown>, outer?: AbortSignal): AsyncIterable<unknown> {
  return {
    [Symbol.asyncIterator]() {
      const controller = new AbortController();
      const abort = () => controller.abort(outer?.reason);
      if (outer?.aborted) abort();
      else outer?.addEventListener('abort', abort, { once: true });
      let inner: Promise<AsyncIterator<unknown>> | undefined;
      const iterator = () => (inner ??= start(controller.signal).then((iterable) => (iterable as AsyncIterable<unknown>)[Symbol.asyncIterator]()));
      const stop = async () => {
        outer?.removeEventListener('abort', abort);
        controller.abort();
        const started = await inner?.catch(() => undefined);
        await started?.return?.();
        return { done: true as const, value: undefined };
      };
      return {
        async next() {
          if (controller.signal.aborted) return stop();
          const result = await (await iterator()).next();
          if (result.done) outer?.removeEventListener('abort', abort);
          return result;
        },
        return: stop,
      };
    },
  };
}

/**
 * The control plane called in the same process, no serialisation: each call goes to its procedure
 * as tRPC's own caller would send it, without building the caller's path proxies per call.
 * `services` are the API's (`apiServicesOf`): each router reaches only the functions it declares.
 */
export function createInProcessControlPlane(services: NarrowApiServices): ControlPlane {
  const procedures = appRouter._def.procedures as unknown as Procedures;
  const call = (context: CallContext, domain: string, procedure: string, input: unknown, extra: { signal?: AbortSignal; uploadMeta?: unknown } = {}) => {
    const path = `${domain}.${procedure}`;
    return callTRPCProcedure({
      router: appRouter,
      path,
      // An unknown path is refused as NOT_FOUND, as tRPC's caller refuses it.
      type: procedures[path]?._def.type ?? 'query',
      ctx: { services, identity: context.identity, tenantHint: context.tenantHint, uploadMeta: extra.uploadMeta, requestId: context.requestId, traceparent: context.traceparent },
      getRawInput: async () => input,
      signal: extra.signal,
      batchIndex: 0,
    });
  };
  return {
    query: call,
    mutation: call,
    subscription: (context: CallContext, domain: string, procedure: string, input: unknown, options: { signal?: AbortSignal } = {}) =>
      subscribe((signal) => call(context, domain, procedure, input, { signal }), options.signal),
    upload: (context: CallContext, domain: string, procedure: string, body: Parameters<ControlPlane['upload']>[3]) =>
      call(context, domain, procedure, detachedByteStream(body.stream), { uploadMeta: body.meta }),
  } as ControlPlane;
}
