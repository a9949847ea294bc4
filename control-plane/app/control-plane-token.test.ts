import { describe, expect, it } from 'vitest';
import { controlPlaneTokenCheck, controlPlaneTokenProblem, generateControlPlaneToken } from './control-plane-token.ts';

describe('the control plane credential', () => {
  it('takes at least 32 bytes of printable ASCII, and says why not in an operator\u2019s words', () => {
    expect(controlPlaneTokenProblem('a'.repeat(32))).toBeUndefined();
    expect(controlPlaneTokenProblem(generateControlPlaneToken())).toBeUndefined();
    expect(controlPlaneTokenProblem('a'.repeat(31))).toBe('must be at least 32 bytes (openssl rand -base64 32)');
    expect(controlPlaneTokenProblem('')).toMatch(/at least 32 bytes/);
    expect(controlPlaneTokenProblem(`${'a'.repeat(32)} b`)).toMatch(/printable ASCII without spaces/);
    expect(controlPlaneTokenProblem('é'.repeat(20))).toMatch(/printable ASCII/);
  });

  it('accepts the one credential only: not a prefix, an extension, another value or none', () => {
    const token = generateControlPlaneToken();
    const isCaller = controlPlaneTokenCheck(token);
    expect(isCaller(token)).toBe(true);
    for (const other of [undefined, '', token.slice(0, -1), `${token}=`, token.toUpperCase(), generateControlPlaneToken()]) expect(isCaller(other), String(other)).toBe(false);
  });

  it('makes a fresh one each time', () => {
    expect(generateControlPlaneToken()).not.toBe(generateControlPlaneToken());
    expect(Buffer.from(generateControlPlaneToken(), 'base64url')).toHaveLength(32);
  });
});
