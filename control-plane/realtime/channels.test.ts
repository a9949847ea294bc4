import { describe, expect, it } from 'vitest';
import { NegotiateInputSchema } from './realtime.schema.ts';
import { channelFilter } from './realtime.service.ts';

const ID = '6f1c2a4e-8b1d-4c3e-9f00-0123456789ab';

describe('realtime channels', () => {
  it('match every change, one type, or one resource (its id in either letter case)', () => {
    const event = { type: 'invoice', id: ID };
    expect(channelFilter(['resources'])(event)).toBe(true);
    expect(channelFilter(['resources:invoice'])(event)).toBe(true);
    expect(channelFilter(['resources:order'])(event)).toBe(false);
    expect(channelFilter([`resources:invoice:${ID.toUpperCase()}`])(event)).toBe(true);
    expect(channelFilter([`resources:order:${ID}`, 'resources:invoice'])(event)).toBe(true);
    expect(channelFilter([`resources:invoice:${ID.replace('6f', '00')}`])(event)).toBe(false);
  });

  it('are named as the schema takes them, each once', () => {
    expect(NegotiateInputSchema.parse({ channels: ['resources', 'resources', `resources:invoice:${ID}`] }).channels).toEqual(['resources', `resources:invoice:${ID}`]);
    for (const channel of ['orders', 'resources:', 'resources:a b', 'resources:invoice:42', `resources:invoice:${ID}:x`, 'Resources']) {
      expect(NegotiateInputSchema.safeParse({ channels: [channel] }).success, channel).toBe(false);
    }
  });
});
