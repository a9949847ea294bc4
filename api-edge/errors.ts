import { HTTP_STATUS, toAppErrorBody, type AppErrorBody } from '../control-plane/contracts.ts';

/** The `{error: {...}}` body and status for anything a route throws, local or from the control plane. */
export function toErrorResponse(error: unknown): { status: number; body: { error: AppErrorBody } } {
  const remote = (error as { data?: { appError?: AppErrorBody } })?.data?.appError;
  const body = remote ?? toAppErrorBody(error);
  return { status: HTTP_STATUS[body.code] ?? 500, body: { error: body } };
}

export function errorBody(code: AppErrorBody['code'], message: string, details?: Record<string, unknown>): { error: AppErrorBody } {
  return { error: details ? { code, message, details } : { code, message } };
}
