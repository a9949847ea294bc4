import { describe, expect, it } from 'vitest';
import { activeTrace, formatTraceparent, newTraceparent, parseTraceparent, requestIdFrom, withTrace } from './trace-context.ts';

const VALID = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';

describe('traceparent (W3C Trace Context)', () => {
  it('parses a valid header and formats it back unchanged', () => {
    const parsed = parseTraceparent(VALID);
    expect(parsed).toMatchObject({ traceId: '4bf92f3577b34da6a3ce929d0e0e4736', spanId: '00f067aa0ba902b7', traceFlags: 1, isRemote: true });
    expect(formatTraceparent(parsed!)).toBe(VALID);
  });

  it.each([
    ['empty', ''],
    ['upper-case hex', VALID.toUpperCase()],
    ['version ff', `ff${VALID.slice(2)}`],
    ['all-zero trace id', '00-00000000000000000000000000000000-00f067aa0ba902b7-01'],
    ['all-zero parent id', '00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01'],
    ['version 00 with trailing data', `${VALID}-extra`],
    ['short trace id', '00-4bf92f3577b34da6a3ce929d0e0e473-00f067aa0ba902b7-01'],
    ['missing flags', '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7'],
  ])('refuses %s', (_, value) => {
    expect(parseTraceparent(value)).toBeUndefined();
  });

  it('accepts a later version with more fields, keeping the known ones', () => {
    expect(parseTraceparent(`01${VALID.slice(2)}-whatever`)?.traceId).toBe('4bf92f3577b34da6a3ce929d0e0e4736');
  });

  it('keeps only the sampled bit of the flags', () => {
    expect(formatTraceparent(parseTraceparent(`${VALID.slice(0, -2)}ff`)!)).toBe(VALID);
  });

  it('starts new traces that parse, not sampled', () => {
    const fresh = newTraceparent();
    expect(parseTraceparent(fresh)?.traceFlags).toBe(0);
    expect(fresh).not.toBe(newTraceparent());
  });
});

describe('request ids', () => {
  it('keeps a printable id of at most 128 characters', () => {
    expect(requestIdFrom('req-1 abc/XYZ')).toBe('req-1 abc/XYZ');
    expect(requestIdFrom('x'.repeat(128))).toBe('x'.repeat(128));
  });

  it.each([['too long', 'x'.repeat(129)], ['control characters', 'a\tb'], ['non-ASCII', 'é'], ['empty', ''], ['absent', null]])('replaces one that is %s with a UUID', (_, value) => {
    expect(requestIdFrom(value)).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
  });
});

describe('active trace', () => {
  it('is what withTrace was given, across awaits, and nothing outside it', async () => {
    expect(activeTrace()).toEqual({});
    const seen = await withTrace({ requestId: 'r1', traceparent: VALID }, async () => {
      await new Promise((resolve) => setTimeout(resolve, 1));
      return activeTrace();
    });
    expect(seen).toEqual({ requestId: 'r1', traceparent: VALID });
    expect(activeTrace()).toEqual({});
  });

  it('drops a malformed traceparent but keeps the request id', () => {
    expect(withTrace({ requestId: 'r2', traceparent: 'nonsense' }, activeTrace)).toEqual({ requestId: 'r2' });
  });
});
