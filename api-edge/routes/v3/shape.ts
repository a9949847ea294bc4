import { z } from 'zod';
import {
  ExecutionSchema,
  ResourcePageSchema,
  ResourceSchema,
  StepDefinitionSchema,
  UserSchema,
  WorkflowDefinitionSchema,
  type Execution,
  type Resource,
  type ResourcePage,
  type User,
} from '../../../control-plane/contracts.ts';
import { estimated } from '../list-count.ts';
import { jsonObjectBody } from '../request-input.ts';

/**
 * The REST shapes of v3, built from the procedures' output schemas: what the functions below
 * render, and what the OpenAPI document (api-edge/openapi) describes.
 */
export const V3ResourceSchema = ResourceSchema.pick({ id: true, type: true, createdAt: true, updatedAt: true }).catchall(z.unknown());
export type V3Resource = z.infer<typeof V3ResourceSchema>;
export const V3ResourcePageSchema = ResourcePageSchema.omit({ items: true }).extend({ data: z.array(V3ResourceSchema) });
export const V3UserListItemSchema = UserSchema.pick({ id: true, email: true, name: true, role: true, status: true, lastLoginAt: true });
export const V3UserPageSchema = z.object({ data: z.array(V3UserListItemSchema), total: z.number().int() });
export const V3WorkflowListSchema = z.object({
  data: z.array(WorkflowDefinitionSchema.extend({ steps: z.array(StepDefinitionSchema.pick({ id: true, name: true, type: true })) })),
});
/** `output` only once an execution completed, `error` only when it failed. */
export const V3ExecutionSchema = ExecutionSchema.omit({ output: true, error: true }).extend({
  output: ExecutionSchema.shape.output.optional(),
  error: ExecutionSchema.shape.error.unwrap().optional(),
});
export type V3Execution = z.infer<typeof V3ExecutionSchema>;
export const V3ExecutionPageSchema = z.object({
  data: z.array(ExecutionSchema.pick({ id: true, workflowId: true, state: true, startedAt: true, completedAt: true })),
  total: z.number().int(),
});

/**
 * Fields of a v3 resource body that the server owns (v3's and, for the same record, v4's names);
 * ignored when a client sends them, so that no data field can pose as the tenant or the author.
 */
const SERVER_FIELDS = new Set(['id', 'type', 'createdAt', 'updatedAt', 'version', 'tenantId', 'createdBy', 'updatedBy']);

/** The v3 body of a write, as the resource's `data`. */
export function resourceData(body: unknown): Record<string, unknown> {
  return Object.fromEntries(Object.entries(jsonObjectBody(body)).filter(([key]) => !SERVER_FIELDS.has(key)));
}

/**
 * v3 renders a resource flat: its data fields beside `id`, `type` and the timestamps. Built with
 * `Object.assign`: on Node 20, spread syntax followed by more properties (`{ ...data, id }`) costs
 * microseconds per object. A `__proto__` field (JSON.parse makes it an own key) must stay a field,
 * which only spread syntax defines rather than assigns, so such data takes that slower path.
 */
export function v3Resource(resource: Resource): V3Resource {
  const fields = { id: resource.id, type: resource.type, createdAt: resource.createdAt, updatedAt: resource.updatedAt };
  return Object.hasOwn(resource.data, '__proto__') ? { ...resource.data, ...fields } : Object.assign({}, resource.data, fields);
}

export function v3ResourcePage(page: ResourcePage) {
  return { data: page.items.map(v3Resource), total: page.total, ...estimated(page), hasMore: page.hasMore, nextCursor: page.nextCursor };
}

export function v3UserListItem(user: User) {
  return { id: user.id, email: user.email, name: user.name, role: user.role, status: user.status, lastLoginAt: user.lastLoginAt };
}

/** v3 renders `output` only once an execution completed, and `error` only when it failed. */
export function v3Execution(execution: Execution): V3Execution {
  const { output, error, ...rest } = execution;
  return { ...rest, ...(execution.state === 'completed' ? { output } : {}), ...(error ? { error } : {}) };
}
