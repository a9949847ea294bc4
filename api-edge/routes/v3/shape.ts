import type { Resource, ResourcePage, User } from '../../../control-plane/contracts.ts';
import { jsonObjectBody } from '../request-input.ts';

/** Fields of a v3 resource body that the server owns; ignored when a client sends them. */
const SERVER_FIELDS = new Set(['id', 'type', 'createdAt', 'updatedAt', 'version']);

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
export function v3Resource(resource: Resource): Record<string, unknown> {
  const fields = { id: resource.id, type: resource.type, createdAt: resource.createdAt, updatedAt: resource.updatedAt };
  return Object.hasOwn(resource.data, '__proto__') ? { ...resource.data, ...fields } : Object.assign({}, resource.data, fields);
}

export function v3ResourcePage(page: ResourcePage) {
  return { data: page.items.map(v3Resource), total: page.total, hasMore: page.hasMore, nextCursor: page.nextCursor };
}

export function v3UserListItem(user: User) {
  return { id: user.id, email: user.email, name: user.name, role: user.role, status: user.status, lastLoginAt: user.lastLoginAt };
}
