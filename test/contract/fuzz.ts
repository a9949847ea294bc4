import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import fc from 'fast-check';
import { conformanceProblems } from '../harness/conformance.ts';
import { fillPath } from '../harness/routes.ts';
import type { ContractFixture, ContractTenant } from './fixture.ts';
import { documentedOperations, openApiDocument, type DocumentedOperation, type JsonSchema, type OperationParameter } from './operations.ts';
import { invalidArbitrary, representable, validArbitrary } from './schema-arbitrary.ts';

/**
 * Schema-driven fuzzing of every documented operation (the checks of Schemathesis and RESTler,
 * on fast-check): requests built from the OpenAPI documents, valid and invalid, as the
 * administrators of two tenants, naming their own objects, the other tenant's, shared ones and
 * made-up ones. Each answer must:
 * - not be a server error;
 * - conform to the documents (status, body schema, headers: test/harness/conformance.ts);
 * - if a 4xx, leave every row of both tenants as it was (and carry the error body, which
 *   conformance checks);
 * - if the request names the other tenant's object or tenant, be a 4xx;
 * - never carry the other tenant's data (its marker);
 * - if the request breaks the documented schema (checked with a validator), be a 4xx.
 */

type Caller = 'a' | 'b';
/** Whose a parameter value is: the caller's, the other tenant's, or no tenant's. */
type Owner = 'own' | 'other' | 'none';

interface Value {
  text: string;
  owner: Owner;
}

export interface FuzzRequest {
  caller: Caller;
  path: Record<string, Value>;
  query: Array<[string, string]>;
  headers: Record<string, Value>;
  body?: { kind: 'json'; value: unknown } | { kind: 'bytes'; value: Uint8Array };
  /** What the request breaks on purpose, when a validator confirms it is broken. */
  broken?: string;
}

const compilers = new Map<string, Ajv2020>();
const validators = new Map<string, ValidateFunction>();

/** A validator of `schema` (which may `$ref` the version's components); `coerce` for text parameters. */
function validatorOf(operation: DocumentedOperation, schema: JsonSchema, coerce: boolean): ValidateFunction {
  const key = `${operation.version}:${coerce}:${JSON.stringify(schema)}`;
  let validate = validators.get(key);
  if (validate) return validate;
  const compilerKey = `${operation.version}:${coerce}`;
  let ajv = compilers.get(compilerKey);
  if (!ajv) {
    ajv = new Ajv2020({ strict: false, validateFormats: false, coerceTypes: coerce });
    ajv.addSchema(openApiDocument(operation.version), `urn:contract:${operation.version}`);
    compilers.set(compilerKey, ajv);
  }
  const rooted = JSON.parse(JSON.stringify(schema).replaceAll('"$ref":"#/', `"$ref":"urn:contract:${operation.version}#/`));
  validate = coerce ? ajv.compile({ type: 'object', properties: { value: rooted }, required: ['value'] }) : ajv.compile(rooted);
  validators.set(key, validate);
  return validate;
}

/** The query values a route's case fixes (a dry run): never generated, and forced in the body too. */
function fixedQuery(operation: DocumentedOperation): Array<[string, string]> {
  return [...new URLSearchParams(operation.case?.query ?? '').entries()];
}

const PRINTABLE = /^[\x21-\x7e]([\x20-\x7e]*[\x21-\x7e])?$/;

/** Text for a parameter from a generated value: JSON for JSON parameters, else the value as text. */
const asText = (param: OperationParameter, value: unknown) => (param.json || (typeof value === 'object' && value !== null) ? JSON.stringify(value) : String(value));

function parameterArbitrary(fixture: ContractFixture, operation: DocumentedOperation, param: OperationParameter, caller: Caller): fc.Arbitrary<Value | undefined> {
  const document = openApiDocument(operation.version);
  const own: ContractTenant = fixture[caller];
  const other: ContractTenant = fixture[caller === 'a' ? 'b' : 'a'];
  const named = (tenant: ContractTenant, owner: Owner) => (tenant.names[param.name] ?? []).map((text) => ({ text, owner }));
  const choices: Array<fc.WeightedArbitrary<Value>> = [];
  const ownNames = named(own, 'own');
  // A user is no tenant's object; the other tenant's administrator, granted a membership here, would join the two tenants.
  const otherNames = param.name === 'oid' ? [] : named(other, 'other');
  const shared = fixture.shared[param.name];
  if (ownNames.length) choices.push({ weight: 5, arbitrary: fc.constantFrom(...ownNames) });
  if (otherNames.length) choices.push({ weight: 2, arbitrary: fc.constantFrom(...otherNames) });
  if (shared) choices.push({ weight: 3, arbitrary: fc.constantFrom(...shared.map((text) => ({ text, owner: 'none' as const }))) });
  const generated = validArbitrary(document, param.schema)
    .map((value) => asText(param, value))
    .filter((text) => (param.in === 'header' ? PRINTABLE.test(text) : param.in === 'path' ? text.length > 0 : true))
    .map((text) => ({ text, owner: 'none' as const }));
  choices.push({ weight: choices.length ? 1 : 4, arbitrary: generated });
  const value = fc.oneof(...choices);
  const selectsTenant = ['tenant_id', 'X-Tenant-Id'].includes(param.name);
  // Optional parameters are left out now and then; a tenant selector is sent most of the time.
  if (param.in === 'path' || param.required) return value;
  return fc.option(value, { nil: undefined, freq: selectsTenant ? 5 : 2 });
}

/** Requests for one operation by one of the two callers. */
export function requestArbitrary(fixture: ContractFixture, operation: DocumentedOperation): fc.Arbitrary<FuzzRequest> {
  const document = openApiDocument(operation.version);
  const fixed = fixedQuery(operation);
  const params = operation.parameters.filter((p) => !fixed.some(([name]) => name === p.name));
  return fc.constantFrom<Caller>('a', 'b').chain((caller) => {
    const values = fc.tuple(...params.map((param) => parameterArbitrary(fixture, operation, param, caller)));
    const body: fc.Arbitrary<FuzzRequest['body'] | undefined> = !operation.body
      ? fc.constant(undefined)
      : operation.body.mediaType === 'application/octet-stream'
        ? fc.oneof(fc.string({ maxLength: 600 }).map((s) => new TextEncoder().encode(s)), fc.uint8Array({ maxLength: 6000 })).map((value) => ({ kind: 'bytes' as const, value }))
        : fc
            .oneof(
              { weight: 3, arbitrary: validArbitrary(document, operation.body.schema) },
              // The route case's own body, known to be one the route takes, now and then.
              ...(operation.case?.body === undefined ? [] : [{ weight: 1, arbitrary: fc.constant(operation.case.body) }]),
            )
            .map((value) => ({ kind: 'json' as const, value }));
    const maybeBody = operation.body?.mediaType === 'application/json' && !operation.body.required ? fc.option(body, { nil: undefined }) : body;
    const valid = fc.tuple(values, maybeBody).map(([chosen, b]): FuzzRequest => assemble(operation, params, caller, chosen, b, undefined));
    const brokenParts = [
      ...(operation.body?.mediaType === 'application/json' ? ['body'] : []),
      ...params.filter((p) => p.in !== 'header' && !p.json && !p.deepObject && hasBounds(p.schema)).map((p) => p.name),
    ];
    if (!brokenParts.length) return valid;
    const broken = fc
      .tuple(values, maybeBody, fc.constantFrom(...brokenParts))
      .chain(([chosen, b, part]) => {
        if (part === 'body') return invalidArbitrary(document, operation.body!.schema).filter(representable).map((value) => assemble(operation, params, caller, chosen, { kind: 'json', value }, 'body'));
        const index = params.findIndex((p) => p.name === part);
        const param = params[index]!;
        return invalidArbitrary(document, param.schema)
          .filter(representable)
          .map((value) => asText(param, value))
          .filter((text) => text.length > 0)
          .map((text) => assemble(operation, params, caller, chosen.map((v, i) => (i === index ? { text, owner: 'none' as const } : v)), b, part));
      });
    return fc.oneof({ weight: 3, arbitrary: valid }, { weight: 1, arbitrary: broken });
  });
}

const hasBounds = (schema: JsonSchema) => ['maxLength', 'minLength', 'maximum', 'minimum', 'enum', 'pattern'].some((k) => Object.hasOwn(schema, k)) || ['integer', 'number', 'boolean'].includes(schema.type);

function assemble(operation: DocumentedOperation, params: OperationParameter[], caller: Caller, chosen: Array<Value | undefined>, body: FuzzRequest['body'] | undefined, broken: string | undefined): FuzzRequest {
  // What JSON carries of the value (undefined members dropped), so that the validator sees what the server gets.
  if (body?.kind === 'json') body = { kind: 'json', value: body.value === undefined ? undefined : JSON.parse(JSON.stringify(body.value)) };
  const request: FuzzRequest = { caller, path: {}, query: [], headers: {}, body, broken };
  params.forEach((param, i) => {
    const value = chosen[i];
    if (!value) return;
    if (param.in === 'path') request.path[param.name] = value;
    else if (param.in === 'header') request.headers[param.name] = value;
    else if (param.deepObject) {
      const parsed = safeJson(value.text);
      if (parsed && typeof parsed === 'object') for (const [k, v] of Object.entries(parsed)) request.query.push([`${param.name}[${k}]`, typeof v === 'string' ? v : JSON.stringify(v)]);
    } else request.query.push([param.name, value.text]);
  });
  const fixed = fixedQuery(operation);
  request.query.push(...fixed);
  // A value the case fixes in the query (a dry run) holds in the body too.
  if (request.body?.kind === 'json' && request.body.value && typeof request.body.value === 'object' && !Array.isArray(request.body.value)) {
    const value = { ...(request.body.value as Record<string, unknown>) };
    for (const [name, text] of fixed) if (Object.hasOwn(value, name)) value[name] = safeJson(text) ?? text;
    request.body = { kind: 'json', value };
  }
  return request;
}

const safeJson = (text: string): unknown => {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
};

/** Whether the part the request breaks is refused by the documents' own schema (a wide schema may accept it). */
function confirmedBroken(operation: DocumentedOperation, request: FuzzRequest): boolean {
  if (!request.broken) return false;
  if (request.broken === 'body') {
    // An optional body sent as JSON `null` or `""` is read as no body (docs/decisions/0047-json-bodies.md).
    if (!operation.body!.required && (request.body?.value === null || request.body?.value === '')) return false;
    return request.body?.kind === 'json' && !validatorOf(operation, operation.body!.schema, false)(request.body.value);
  }
  const param = operation.parameters.find((p) => p.name === request.broken)!;
  const text = param.in === 'path' ? request.path[param.name]?.text : request.query.find(([name]) => name === param.name)?.[1];
  return text !== undefined && !validatorOf(operation, param.schema, true)({ value: text });
}

export interface Answer {
  status: number;
  headers: Headers;
  text: string;
  body: unknown;
  url: string;
}

/** Sends a fuzzed request as its caller. */
export async function send(fixture: ContractFixture, operation: DocumentedOperation, request: FuzzRequest): Promise<Answer> {
  const path = fillPath(
    operation.template,
    Object.fromEntries(Object.entries(request.path).map(([name, v]) => [name, encodeURIComponent(v.text)])),
  );
  const query = request.query.map(([k, v]) => `${encodeURIComponent(k).replace(/%5B/g, '[').replace(/%5D/g, ']')}=${encodeURIComponent(v)}`).join('&');
  const url = query ? `${path}?${query}` : path;
  const headers: Record<string, string> = { authorization: `Bearer ${await fixture.stack.token(fixture[request.caller].admin.email)}` };
  for (const [name, v] of Object.entries(request.headers)) headers[name] = v.text;
  let body: string | Uint8Array | undefined;
  if (request.body?.kind === 'json') {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(request.body.value) ?? 'null';
  } else if (request.body?.kind === 'bytes') {
    headers['content-type'] = 'application/octet-stream';
    body = request.body.value;
  }
  const response = await fetch(fixture.stack.url + url, { method: operation.method, headers, body });
  const text = await response.text();
  return { status: response.status, headers: response.headers, text, body: text ? (safeJson(text) ?? text) : undefined, url };
}

/**
 * Tables a refusal of the operation changes by design: an inbound webhook delivery to an existing
 * endpoint counts each refusal against the endpoint (docs/decisions/0094-webhook-verification.md,
 * 0126-webhook-floods.md). Every other table must stay as it was.
 */
function refusalCounters(operation: DocumentedOperation): ReadonlySet<string> {
  return operation.method === 'POST' && operation.template === '/v4/webhooks/:tenantId/:source' ? new Set(['webhook_deliveries', 'webhook_refusal_counts']) : new Set();
}

/** What is wrong with the answer to a fuzzed request: an empty list when nothing is. */
export async function checkRequest(fixture: ContractFixture, operation: DocumentedOperation, request: FuzzRequest): Promise<{ answer: Answer; problems: string[] }> {
  await fixture.settle();
  const before = await fixture.snapshot();
  const answer = await send(fixture, operation, request);
  const where = `${operation.method} ${answer.url.slice(0, 300)} as ${request.caller}`;
  const problems = conformanceProblems({ method: operation.method, path: answer.url, status: answer.status, headers: answer.headers, body: answer.body });
  if (answer.status >= 500) problems.push(`${where}: server error ${answer.status} ${answer.text.slice(0, 300)}`);
  if (answer.status >= 400 && answer.status < 500) {
    const after = await fixture.snapshot();
    const counted = refusalCounters(operation);
    const changed = Object.keys({ ...before, ...after }).filter((table) => before[table] !== after[table] && !counted.has(table));
    if (changed.length) problems.push(`${where}: answered ${answer.status} but changed rows of ${changed.join(', ')}`);
  }
  const namesOther = [...Object.values(request.path), ...Object.values(request.headers)].some((v) => v.owner === 'other') || namesOtherInQuery(fixture, request);
  if (namesOther && answer.status < 400) problems.push(`${where}: answered ${answer.status} to a request naming the other tenant's object`);
  const other = fixture[request.caller === 'a' ? 'b' : 'a'];
  if (answer.text.includes(other.marker)) problems.push(`${where}: the answer carries the other tenant's data`);
  if (answer.status < 400 && confirmedBroken(operation, request)) problems.push(`${where}: answered ${answer.status} to a request whose ${request.broken} the document refuses`);
  return { answer, problems };
}

function namesOtherInQuery(fixture: ContractFixture, request: FuzzRequest): boolean {
  const other = fixture[request.caller === 'a' ? 'b' : 'a'];
  return request.query.some(([name, text]) => name === 'tenant_id' && other.names.tenant_id!.includes(text));
}

export interface FuzzSettings {
  runs: number;
  seed: number;
  /** Replays one counterexample: the `path` fast-check printed, with the seed it printed. */
  path?: string;
  /** Only operations whose operationId is in this list. */
  operations?: string[];
  /** Receives a line per answer (for looking into a run). */
  trace?: (line: string) => void;
}

export interface FuzzFailure {
  operationId: string;
  report: string;
}

/** The documented operations the fuzzer runs (each declared route, with its sample: test/harness/routes.ts). */
export function fuzzedOperations(settings: Pick<FuzzSettings, 'operations'> = {}): DocumentedOperation[] {
  return documentedOperations().filter((op) => !settings.operations || settings.operations.includes(op.operationId));
}

/**
 * Runs `settings.runs` requests against each operation (one property per operation, each with the
 * same seed), and returns every failure with the command that replays it.
 */
export async function fuzz(
  fixture: ContractFixture,
  settings: FuzzSettings,
  onOperation?: (op: DocumentedOperation, statuses: Record<number, number>, failure?: FuzzFailure) => void,
): Promise<{ failures: FuzzFailure[]; statuses: Record<number, number> }> {
  const failures: FuzzFailure[] = [];
  const statuses: Record<number, number> = {};
  for (const operation of fuzzedOperations(settings)) {
    const seen: Record<number, number> = {};
    const details = await fc.check(
      fc.asyncProperty(requestArbitrary(fixture, operation), async (request) => {
        const { answer, problems } = await checkRequest(fixture, operation, request);
        seen[answer.status] = (seen[answer.status] ?? 0) + 1;
        settings.trace?.(`${answer.status} ${operation.method} ${answer.url.slice(0, 160)} as ${request.caller}: ${answer.text.slice(0, 200)}`);
        statuses[answer.status] = (statuses[answer.status] ?? 0) + 1;
        if (problems.length) throw new Error(problems.join('\n'));
      }),
      { numRuns: settings.runs, seed: settings.seed, path: settings.path, endOnFailure: true },
    );
    let failure: FuzzFailure | undefined;
    if (details.failed) {
      const replay = `npm run fuzz -- --operation ${operation.operationId} --seed ${details.seed} --path ${details.counterexamplePath} --runs 1`;
      const error = details.errorInstance instanceof Error ? details.errorInstance.message : String(details.errorInstance);
      failure = {
        operationId: operation.operationId,
        report: `${operation.operationId} (${operation.route}) failed after ${details.numRuns} run(s): seed ${details.seed}, path ${details.counterexamplePath}\n${error}\nrequest: ${JSON.stringify(details.counterexample?.[0], bytesAsLength).slice(0, 1500)}\nreplay: ${replay}`,
      };
      failures.push(failure);
    }
    onOperation?.(operation, seen, failure);
  }
  return { failures, statuses };
}

const bytesAsLength = (_: string, value: unknown) => (value instanceof Uint8Array ? `<${value.length} bytes>` : value);
