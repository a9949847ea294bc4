import { describe, expect, it } from 'vitest';
import { publicRouteOf, webhookDeliveryOf } from './public-routes.ts';

describe('public routes', () => {
  it('names the tenant and source of a delivery path as written, decoded, with or without a trailing slash', () => {
    expect(webhookDeliveryOf('/v4/webhooks/ACME/billing/')).toEqual({ tenantId: 'ACME', source: 'billing' });
    expect(webhookDeliveryOf('/v4/webhooks/acme%2Dco/billing')).toEqual({ tenantId: 'acme-co', source: 'billing' });
    expect(publicRouteOf('POST', '/v4/webhooks/acme/billing/')).toBe('webhook-delivery');
  });

  it('names nothing for the management routes, another path or a malformed escape', () => {
    expect(webhookDeliveryOf('/v4/webhooks/acme/endpoints')).toBeUndefined();
    expect(webhookDeliveryOf('/v4/webhooks/acme/deliveries/')).toBeUndefined();
    expect(webhookDeliveryOf('/v4/webhooks/acme/billing/extra')).toBeUndefined();
    expect(webhookDeliveryOf('/v4/webhooks/%E0%A4%A/billing')).toBeUndefined();
  });
});
