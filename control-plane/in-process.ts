import type { Services } from './trpc/context.ts';
import type { CallContext, ControlPlane } from './trpc/control-plane.ts';
import { createCaller } from './trpc/root-router.ts';
import { detachedByteStream } from './trpc/upload-body.ts';

type AnyCaller = Record<string, Record<string, (input: unknown) => Promise<unknown>>>;

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

/** The control plane called in the same process: one tRPC caller per call, no serialisation. */
export function createInProcessControlPlane(services: Services): ControlPlane {
  const callerFor = (context: CallContext, extra: { signal?: AbortSignal; uploadMeta?: unknown } = {}) =>
    createCaller(
      { services, identity: context.identity, tenantHint: context.tenantHint, uploadMeta: extra.uploadMeta, requestId: context.requestId, traceparent: context.traceparent },
      { signal: extra.signal },
    ) as unknown as AnyCaller;
  const call = (context: CallContext, domain: string, procedure: string, input: unknown) => callerFor(context)[domain]![procedure]!(input);
  return {
    query: call,
    mutation: call,
    subscription: (context: CallContext, domain: string, procedure: string, input: unknown, options: { signal?: AbortSignal } = {}) =>
      subscribe((signal) => callerFor(context, { signal })[domain]![procedure]!(input), options.signal),
    upload: (context: CallContext, domain: string, procedure: string, body: Parameters<ControlPlane['upload']>[3]) =>
      callerFor(context, { uploadMeta: body.meta })[domain]![procedure]!(detachedByteStream(body.stream)),
  } as ControlPlane;
}
