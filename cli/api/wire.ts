import type { components, operations, paths } from './v4.d.ts';

/**
 * The platform's wire types, read from cli/api/v4.d.ts (generated from the v4 OpenAPI document by
 * `npm run api-types`), by the operation's id as the document names it (`listTenantResources`).
 */

/** The document's named schemas (`Schemas['Resource']`). */
export type Schemas = components['schemas'];

export type OperationId = keyof operations;

type JsonOf<Response> = Response extends { content: { 'application/json': infer Body } } ? Body : never;
type SuccessStatus<Op extends OperationId> = Extract<keyof operations[Op]['responses'], 200 | 201 | 202>;

/** The JSON an operation answers with: at `Status`, or at any of its success statuses. */
export type Answer<Op extends OperationId, Status extends keyof operations[Op]['responses'] = SuccessStatus<Op>> = JsonOf<operations[Op]['responses'][Status]>;

/** The JSON body an operation takes. */
export type RequestBody<Op extends OperationId> = operations[Op] extends { requestBody?: infer Body } ? JsonOf<NonNullable<Body>> : never;

type Documented<Item> = { [M in Exclude<keyof Item, 'parameters'>]-?: [NonNullable<Item[M]>] extends [never] ? never : M }[Exclude<keyof Item, 'parameters'>];

/** The methods the document describes operations for, as HTTP writes them. */
export type HttpMethod = Uppercase<Extract<{ [P in keyof paths]: Documented<paths[P]> }[keyof paths], string>>;
