import { z } from 'zod';

/** The Kubernetes object (cluster-scoped, so named by kind and name) that declares a tenant or an app. */
export const DeclaringObjectSchema = z.object({
  kind: z.enum(['Tenant', 'App']),
  name: z.string().min(1),
  uid: z.string().min(1),
});
export type DeclaringObject = z.infer<typeof DeclaringObjectSchema>;

/** Who declares, and the uids of earlier declaring objects known to be gone (their claims may be taken over). */
export const DeclarerSchema = DeclaringObjectSchema.extend({ replacing: z.array(z.string()).optional() });
export type Declarer = z.infer<typeof DeclarerSchema>;

export const tenantSubject = (tenantId: string) => `tenant/${tenantId}`;
/** An app by its natural key, so that it is claimed before its enrollment or child tenant exists. */
export const appSubject = (companyTenantId: string, key: string) => `app/${companyTenantId}/${key}`;
