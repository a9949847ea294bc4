import { describe, expect, it } from 'vitest';
import { UUID } from '../ids.ts';
import { conversationIdOf } from './conversation-names.ts';

describe('conversationIdOf', () => {
  it('keeps a UUID, in lower case', () => {
    expect(conversationIdOf('0F8FAD5B-D9CB-469F-A165-70867728950E')).toBe('0f8fad5b-d9cb-469f-a165-70867728950e');
  });

  it('maps any other name to one version 5 UUID of its own', () => {
    const id = conversationIdOf('support-42');
    expect(id).toMatch(UUID);
    expect(id[14]).toBe('5');
    expect('89ab').toContain(id[19]);
    expect(conversationIdOf('support-42')).toBe(id);
    expect(conversationIdOf('support-43')).not.toBe(id);
  });
});
