import { ConditionType, mergeConditions, type Condition } from '../conditions.ts';

type NewCondition = Omit<Condition, 'lastTransitionTime'>;
type EventType = 'Normal' | 'Warning';

/** What the steps of one reconcile say about the object: status fields, conditions and Events, written once by the step runner. */
export interface StatusDraft {
  /** Sets status fields; fields no step sets are left as they are (a merge patch). */
  set(fields: Record<string, unknown>): void;
  /** Sets a condition; one of the same type set before in this reconcile is replaced. */
  condition(condition: NewCondition): void;
  /** Whether a condition of `type` was set in this reconcile. */
  hasCondition(type: string): boolean;
  /** Records an Event, sent once the status is written. */
  event(type: EventType, reason: string, message: string): void;
}

/** Summary conditions stand at the ends of the list, as `kubectl` shows them: `Ready` first, `Degraded` last. */
const rank = (type: string) => (type === ConditionType.Ready ? 0 : type === ConditionType.Degraded ? 2 : 1);

/**
 * A status draft for the step runner. The conditions written are those the steps set, in the
 * order set with the summary conditions at the ends; each keeps its `lastTransitionTime` when its
 * status did not change. Once `seal`ed (the status written), setting status is a mistake in the
 * steps' order and throws.
 */
export function createStatusDraft() {
  const fields: Record<string, unknown> = {};
  const conditions = new Map<string, NewCondition>();
  const events: { type: EventType; reason: string; message: string }[] = [];
  let sealed = false;
  const open = () => {
    if (sealed) throw new Error('the status was already written in this reconcile: set it in a step before the one that writes it');
  };
  const draft: StatusDraft = {
    set(more) {
      open();
      Object.assign(fields, more);
    },
    condition(condition) {
      open();
      conditions.set(condition.type, condition);
    },
    hasCondition: (type) => conditions.has(type),
    event(type, reason, message) {
      events.push({ type, reason, message });
    },
  };
  return {
    draft,
    /** The status to write, `undefined` when no step set any; conditions merged with `previous` at `now`. */
    toStatus(previous: readonly Condition[] | undefined, now: string): Record<string, unknown> | undefined {
      if (!Object.keys(fields).length && !conditions.size) return undefined;
      const ordered = [...conditions.values()].sort((a, b) => rank(a.type) - rank(b.type));
      return { ...fields, ...(conditions.size ? { conditions: mergeConditions(previous, ordered, now) } : {}) };
    },
    seal(): void {
      sealed = true;
    },
    /** The Events recorded, in order. */
    events,
  };
}
