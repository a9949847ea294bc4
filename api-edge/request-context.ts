import type { CallContext } from '../control-plane/contracts.ts';
import { UnauthorizedError } from '../control-plane/contracts.ts';

/** The authenticated call context of each in-flight request, set once by the edge's request hook. */
export class RequestCalls {
  private readonly byRequest = new WeakMap<Request, CallContext>();

  set(request: Request, call: CallContext): void {
    this.byRequest.set(request, call);
  }

  /** The request's call context; `tenant` (a v4 path's tenant id) overrides the tenant the request named otherwise. */
  of(request: Request, tenant?: string): CallContext {
    const call = this.byRequest.get(request);
    if (!call) throw new UnauthorizedError();
    return tenant ? { ...call, tenantHint: tenant } : call;
  }
}
