import { initTRPC } from '@trpc/server';
import type { Context } from './context.ts';
import { toAppErrorBody } from './error-map.ts';

/** The one tRPC instance; the formatter carries the REST error body to HTTP-link callers. */
export const t = initTRPC.context<Context>().create({
  errorFormatter: ({ shape, error }) => ({ ...shape, data: { ...shape.data, appError: toAppErrorBody(error) } }),
});
