import { octetInputParser } from '@trpc/server/http';
import { z } from 'zod';
import { t } from '../trpc/init.ts';
import { publicProcedure, tenantProcedure, uploadMetaOf } from '../trpc/procedures.ts';
import {
  BudgetKeyInputSchema,
  BudgetKeySchema,
  CreateEndpointInputSchema,
  DeliveryDetailSchema,
  DeliveryPageSchema,
  DeliveryRefSchema,
  DeliverySchema,
  EndpointRefSchema,
  EndpointSchema,
  EndpointWithSecretSchema,
  ListDeliveriesInputSchema,
  ListRefusalsInputSchema,
  ReceivedSchema,
  RefusalPageSchema,
  ReceiveMetaSchema,
  RotatedEndpointSchema,
  RotateSecretInputSchema,
  UpdateEndpointInputSchema,
} from './webhooks.schema.ts';
import type { WebhooksService } from './webhooks.service.ts';

/** What these procedures call of the webhooks service: the API's context holds these functions and no others (app/services.ts). */
export const WEBHOOKS_API = ['budgetKey', 'createEndpoint', 'deleteEndpoint', 'getDelivery', 'getEndpoint', 'listDeliveries', 'listEndpoints', 'listRefusals', 'receive', 'replayDelivery', 'rotateSecret', 'updateEndpoint'] as const satisfies readonly (keyof WebhooksService)[];

declare module '../trpc/context.ts' {
  interface ApiServices {
    webhooks: Pick<WebhooksService, (typeof WEBHOOKS_API)[number]>;
  }
}

/** Endpoint configuration, deliveries and replays are the tenant administrator's (`tenants.manage`). */
export const webhooksRouter = t.router({
  createEndpoint: tenantProcedure('tenants.manage')
    .input(CreateEndpointInputSchema)
    .output(EndpointWithSecretSchema)
    .mutation(({ ctx, input }) => ctx.services.webhooks.createEndpoint(ctx.actor, input)),
  listEndpoints: tenantProcedure('tenants.manage')
    .input(z.object({}).strict())
    .output(z.array(EndpointSchema))
    .query(({ ctx }) => ctx.services.webhooks.listEndpoints(ctx.actor)),
  getEndpoint: tenantProcedure('tenants.manage')
    .input(EndpointRefSchema)
    .output(EndpointSchema)
    .query(({ ctx, input }) => ctx.services.webhooks.getEndpoint(ctx.actor, input.source)),
  updateEndpoint: tenantProcedure('tenants.manage')
    .input(UpdateEndpointInputSchema)
    .output(EndpointSchema)
    .mutation(({ ctx, input }) => ctx.services.webhooks.updateEndpoint(ctx.actor, input)),
  deleteEndpoint: tenantProcedure('tenants.manage')
    .input(EndpointRefSchema)
    .output(z.void())
    .mutation(({ ctx, input }) => ctx.services.webhooks.deleteEndpoint(ctx.actor, input.source)),
  rotateSecret: tenantProcedure('tenants.manage')
    .input(RotateSecretInputSchema)
    .output(RotatedEndpointSchema)
    .mutation(({ ctx, input }) => ctx.services.webhooks.rotateSecret(ctx.actor, input.source, { revokePrevious: input.revokePrevious })),
  listDeliveries: tenantProcedure('tenants.manage')
    .input(ListDeliveriesInputSchema)
    .output(DeliveryPageSchema)
    .query(({ ctx, input }) => ctx.services.webhooks.listDeliveries(ctx.actor, input)),
  listRefusals: tenantProcedure('tenants.manage')
    .input(ListRefusalsInputSchema)
    .output(RefusalPageSchema)
    .query(({ ctx, input }) => ctx.services.webhooks.listRefusals(ctx.actor, input)),
  getDelivery: tenantProcedure('tenants.manage')
    .input(DeliveryRefSchema)
    .output(DeliveryDetailSchema)
    .query(({ ctx, input }) => ctx.services.webhooks.getDelivery(ctx.actor, input.deliveryId)),
  replayDelivery: tenantProcedure('tenants.manage')
    .input(DeliveryRefSchema)
    .output(DeliverySchema)
    .mutation(({ ctx, input }) => ctx.services.webhooks.replayDelivery(ctx.actor, input.deliveryId)),
  /** Which budget a delivery to a path spends (the edge asks before the delivery is read): no caller identity. */
  budgetKey: publicProcedure
    .input(BudgetKeyInputSchema)
    .output(BudgetKeySchema)
    .query(({ ctx, input }) => ctx.services.webhooks.budgetKey(input)),
  /** An outside system's delivery: no caller identity; the body's signature authenticates it. */
  receive: publicProcedure
    .use(uploadMetaOf(ReceiveMetaSchema))
    .input(octetInputParser)
    .output(ReceivedSchema)
    .mutation(({ ctx, input }) => ctx.services.webhooks.receive(ctx.uploadMeta, input)),
});
