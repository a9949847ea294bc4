import type { Db, Tx } from '../db/client.ts';
import { ConflictError, DomainError, NotFoundError, ValidationError } from '../errors.ts';
import type { Actor } from '../identity/identity.schema.ts';
import type { Action } from '../object-types/object-types.schema.ts';
import type { ObjectTypesService } from '../object-types/object-types.service.ts';
import type { ActionResult, ApplyActionInput } from './resource-actions.schema.ts';
import { namedVersion, resourceOps, type ResourceData, type ResourceSearchIndex } from './resource-ops.ts';

/**
 * How an action starts its workflow without the resources domain knowing the orchestrate one:
 * `prepare` records the execution in the action's own transaction (404 for an unknown workflow,
 * so nothing is written), and `start`, called once that transaction has committed, starts the run.
 */
export interface ActionWorkflows {
  prepare(
    tx: Tx,
    actor: Actor,
    execution: { workflowId: string; input: Record<string, unknown>; metadata: Record<string, unknown> },
  ): Promise<{ executionId: string; start: () => Promise<void> }>;
}

/** Keys of a workflow's input that the action itself fills. */
const ACTION_INPUT_KEYS = ['resource', 'action'] as const;

const isPlainObject = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === 'object' && !Array.isArray(value);

/** The value at a dotted path of the data (own keys only); a missing field reads as null. */
function valueAt(data: ResourceData, path: string): unknown {
  let node: unknown = data;
  for (const segment of path.split('.')) {
    if (!isPlainObject(node) || !Object.hasOwn(node, segment)) return null;
    node = node[segment];
  }
  return node ?? null;
}

/** Sets a dotted path of `data` in place, making the objects on the way (`__proto__` is a key like any other). */
function setAt(data: ResourceData, path: string, value: unknown): void {
  const define = (target: Record<string, unknown>, key: string, v: unknown) =>
    Object.defineProperty(target, key, { value: v, enumerable: true, writable: true, configurable: true });
  const segments = path.split('.');
  let node = data;
  for (const segment of segments.slice(0, -1)) {
    const next = Object.hasOwn(node, segment) ? node[segment] : undefined;
    if (!isPlainObject(next)) define(node, segment, {});
    node = node[segment] as Record<string, unknown>;
  }
  define(node, segments[segments.length - 1]!, structuredClone(value));
}

/**
 * The data an action leaves: each `from` field must hold one of its values (409 CONFLICT naming
 * the field and the value it holds), then the `set` fields take their values.
 */
export function transition(name: string, action: Action, current: ResourceData): ResourceData {
  for (const [field, allowed] of Object.entries(action.from ?? {})) {
    const value = valueAt(current, field);
    if (!allowed.some((candidate) => candidate === value)) {
      throw new ConflictError(`action "${name}" does not apply while ${field} is ${JSON.stringify(value)} (it applies from ${allowed.map((a) => JSON.stringify(a)).join(', ')})`, {
        action: name,
        field,
        current: value,
        allowed,
      });
    }
  }
  const next = structuredClone(current);
  for (const [field, value] of Object.entries(action.set ?? {})) setAt(next, field, value);
  return next;
}

/**
 * Applies an action declared on the resource's type: the guarded transition goes through the one
 * checked write (row lock, the version named, the schema), and a workflow the action starts is
 * recorded in that same transaction and started only after it commits, so no run starts for a
 * write that rolled back. A workflow the engine refuses to start leaves its execution `failed`.
 */
export async function applyAction(
  deps: { db: Db; objectTypes: ObjectTypesService; workflows?: ActionWorkflows; searchIndex?: ResourceSearchIndex },
  actor: Actor,
  input: ApplyActionInput,
): Promise<ActionResult> {
  const { db, objectTypes } = deps;
  const expectedVersion = namedVersion(input.version, input.ifMatch);
  const outcome = await db.inTenant(actor.tenantId, async (tx) => {
    const objectType = await objectTypes.requireWritable(tx, input.type);
    const action = Object.hasOwn(objectType.actions, input.action) ? objectType.actions[input.action] : undefined;
    if (!action) throw new NotFoundError(`action "${input.action}" of ${objectType.key}`);
    if (input.input !== undefined) {
      if (!action.workflow) throw ValidationError.field('input', `is for the action's workflow, and action "${input.action}" starts none`);
      const reserved = ACTION_INPUT_KEYS.find((key) => Object.hasOwn(input.input!, key));
      if (reserved) throw ValidationError.field(`input.${reserved}`, 'is filled by the action');
    }
    const resource = await resourceOps(tx, objectTypes.validate, deps.searchIndex).write(objectType, input.id, {
      change: (current) => transition(input.action, action, current.data),
      expectedVersion,
      by: actor.userId,
      operation: `action:${input.action}`,
    });
    if (!action.workflow) return { resource };
    if (!deps.workflows) throw new DomainError('INTERNAL_ERROR', 'workflow engine is not configured');
    const execution = await deps.workflows.prepare(tx, actor, {
      workflowId: action.workflow,
      input: { ...input.input, resource, action: input.action },
      metadata: { action: input.action, type: objectType.key, resourceId: resource.id },
    });
    return { resource, execution };
  });
  if (!outcome.execution) return { resource: outcome.resource };
  await outcome.execution.start();
  return { resource: outcome.resource, executionId: outcome.execution.executionId };
}
