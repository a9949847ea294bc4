import { NUL_ISSUE, RESERVED_KEY_ISSUE, UNPAIRED_SURROGATE_ISSUE, ValidationError } from '../errors.ts';

/**
 * How many levels a request body may nest (a procedure's input holds it one level down): far
 * beyond any document the APIs take, well within what every reader of it handles.
 */
export const MAX_NESTING = 100;
export const NESTING_ISSUE = `must not be nested more than ${MAX_NESTING} levels deep`;

/**
 * The first value or object key in `value` that PostgreSQL cannot store as sent, with its path and
 * the issue; undefined when there is none. Text and `jsonb` refuse the NUL character; `jsonb`
 * refuses an unpaired UTF-16 surrogate (which a JSON body can carry as `\ud800`), and text would
 * keep it as U+FFFD, another string than the one sent. Input nested deeper than `MAX_NESTING` is
 * refused too: JSON.stringify and PostgreSQL's JSON reader fail on very deep documents. So is a
 * `__proto__` key (a JSON body can hold one): a validated copy of an object (zod's records) drops
 * it, while one nested deeper was kept. Walked with a stack of its own, so no input can exhaust
 * the call stack.
 */
export function unstorableInput(value: unknown): { path: string[]; issue: string } | undefined {
  const pending: Array<{ value: unknown; depth: number; parent: number; key: string }> = [{ value, depth: 0, parent: -1, key: '' }];
  const seen: Array<{ parent: number; key: string }> = [];
  const pathOf = (index: number) => {
    const path: string[] = [];
    for (let at = index; at > 0; at = seen[at]!.parent) path.unshift(seen[at]!.key);
    return path;
  };
  while (pending.length) {
    const item = pending.pop()!;
    const index = seen.push({ parent: item.parent, key: item.key }) - 1;
    if (typeof item.value === 'string') {
      const issue = textIssue(item.value);
      if (issue !== undefined) return { path: pathOf(index), issue };
      continue;
    }
    if (item.value === null || typeof item.value !== 'object') continue;
    if (item.depth > MAX_NESTING) return { path: pathOf(index), issue: NESTING_ISSUE };
    // Pushed in reverse, so the first key is looked at first.
    const entries = Object.entries(item.value);
    for (let i = entries.length - 1; i >= 0; i--) {
      const [key, child] = entries[i]!;
      const keyIssue = key === '__proto__' ? RESERVED_KEY_ISSUE : textIssue(key);
      if (keyIssue !== undefined) return { path: [...pathOf(index), key], issue: keyIssue };
      pending.push({ value: child, depth: item.depth + 1, parent: index, key });
    }
  }
  return undefined;
}

/** A high surrogate not followed by a low one, or a low one not preceded by a high one. */
const UNPAIRED_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

function textIssue(text: string): string | undefined {
  if (text.includes('\u0000')) return NUL_ISSUE;
  if (UNPAIRED_SURROGATE.test(text)) return UNPAIRED_SURROGATE_ISSUE;
  return undefined;
}

/** Inputs under which the edge passes a whole request body (resources' `data` and `patch`, users' `changes`). */
const BODY_INPUTS = new Set(['changes', 'data', 'patch']);

/**
 * The 400 for a procedure input that `unstorableInput` refuses, or undefined. Fields of a body
 * passed whole are named as the client sent them.
 */
export function unstorableInputError(input: unknown): ValidationError | undefined {
  const found = unstorableInput(input);
  if (!found) return undefined;
  const path = found.path.length > 1 && BODY_INPUTS.has(found.path[0]!) ? found.path.slice(1) : found.path;
  return ValidationError.field(path.join('.') || '(body)', found.issue);
}
