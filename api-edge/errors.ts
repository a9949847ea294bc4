import { HTTP_STATUS, ServiceUnavailableError, toAppErrorBody, type AppErrorBody } from '../control-plane/contracts.ts';

/** Socket failures of a call to the control plane over HTTP: it is down, restarting or draining. */
const UNREACHABLE = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENOTFOUND', 'EAI_AGAIN', 'UND_ERR_SOCKET', 'UND_ERR_CONNECT_TIMEOUT']);

function controlPlaneUnreachable(error: unknown): boolean {
  for (let cause = error, depth = 0; cause && depth < 5; cause = (cause as { cause?: unknown }).cause, depth++) {
    if (UNREACHABLE.has(String((cause as { code?: unknown }).code))) return true;
  }
  return false;
}

/** The `{error: {...}}` body and status for anything a route throws, local or from the control plane. */
export function toErrorResponse(error: unknown): { status: number; body: { error: AppErrorBody } } {
  const remote = (error as { data?: { appError?: AppErrorBody } })?.data?.appError;
  const body = remote ?? (controlPlaneUnreachable(error) ? new ServiceUnavailableError('the control plane is unreachable for a moment: retry shortly').toBody() : toAppErrorBody(error));
  return { status: HTTP_STATUS[body.code] ?? 500, body: { error: body } };
}

export function errorBody(code: AppErrorBody['code'], message: string, details?: Record<string, unknown>): { error: AppErrorBody } {
  return { error: details ? { code, message, details } : { code, message } };
}
