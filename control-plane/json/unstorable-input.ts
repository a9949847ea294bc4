import { NUL_ISSUE, UNPAIRED_SURROGATE_ISSUE } from '../errors.ts';

/**
 * The first value or object key in `value` that PostgreSQL cannot store as sent, with its path and
 * the issue; undefined when there is none. Text and `jsonb` refuse the NUL character; `jsonb`
 * refuses an unpaired UTF-16 surrogate (which a JSON body can carry as `\ud800`), and text would
 * keep it as U+FFFD, another string than the one sent.
 */
export function unstorableInput(value: unknown, path: string[] = []): { path: string[]; issue: string } | undefined {
  if (typeof value === 'string') {
    const issue = textIssue(value);
    return issue === undefined ? undefined : { path, issue };
  }
  if (value === null || typeof value !== 'object') return undefined;
  for (const [key, item] of Object.entries(value)) {
    const at = [...path, key];
    const keyIssue = textIssue(key);
    if (keyIssue !== undefined) return { path: at, issue: keyIssue };
    const found = unstorableInput(item, at);
    if (found !== undefined) return found;
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
