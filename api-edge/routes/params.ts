import { z } from 'zod';
import { FileRefSchema, IdempotencyKeySchema, MembershipSchema, ProvisionInputSchema, ResourceRefSchema, TenantRefSchema, VerticalKeySchema } from '../../control-plane/contracts.ts';
import { VERSION_TAG } from './request-input.ts';
import type { ParamDoc, ResponseDoc } from './route.ts';

/** Parameters and answers that several routes describe alike, each with the procedure's schema. */

export const param = (schema: z.ZodType, extra: Omit<ParamDoc, 'schema'> = {}): ParamDoc => ({ schema, ...extra });
export const listOf = <T extends z.ZodType>(item: T) => z.object({ data: z.array(item) });

/** A resource's version, as `ETag` sends it and the conditional headers name it (`"3"`, or `*`). */
export const EntityTag = z.string().max(16).regex(VERSION_TAG);
export const tenantPath = { tenantId: param(TenantRefSchema, { description: 'Tenant id or slug' }) };
export const tenantQuery = { tenant_id: param(TenantRefSchema, { required: false, description: "Tenant id or slug; default: the caller's active tenant" }) };
/** `tenant_id` as a body field beside the procedure's own. */
export const tenantField = { tenant_id: TenantRefSchema.optional() };
export const dryRunFlags = {
  dry_run: param(ProvisionInputSchema.shape.dryRun, { description: 'May be given in the body instead' }),
};
export const typePath = { ...tenantPath, objectType: param(ResourceRefSchema.shape.type, { description: 'The object type, by key or PascalCase name' }) };
export const resourcePath = { ...typePath, id: ResourceRefSchema.shape.id };
export const filePath = { ...resourcePath, propertyName: param(FileRefSchema.shape.property, { description: 'A file property the object type declares' }) };
export const verticalTenantQuery = { tenant_id: param(TenantRefSchema, { required: false, description: "The app's company tenant or its child tenant, by id or slug; default: the caller's tenant" }) };
export const verticalTypePath = { key: param(VerticalKeySchema, { description: 'The key of an enrolled app' }), objectType: typePath.objectType };
export const verticalResourcePath = { ...verticalTypePath, id: ResourceRefSchema.shape.id };

// Conditional and idempotency headers are optional: a request without one is answered as ever.
export const idempotencyHeader = { 'Idempotency-Key': param(IdempotencyKeySchema, { required: false, description: 'A retry with the same key and body answers the first answer' }) };
export const ifNoneMatchHeader = { 'If-None-Match': param(EntityTag, { required: false, description: 'A version the client holds: 304 when it is current' }) };
export const ifMatchHeader = (description: string) => ({ 'If-Match': param(EntityTag, { required: false, description }) });

/** A grant's answers: 200 when the membership existed, 201 when it was made. */
export const membershipOutput: Record<number, ResponseDoc> = {
  200: { description: 'The membership existed', schema: MembershipSchema },
  201: { description: 'The membership was created', schema: MembershipSchema },
};
