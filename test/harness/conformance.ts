import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import { APIS, buildOpenApiDocument, type ApiVersion } from '../../api-edge/openapi/document.ts';
import { isOpenApiDocument } from '../../api-edge/openapi/reference.ts';

/**
 * Checks answers of the REST APIs against their OpenAPI documents (api-edge/openapi): the status
 * must be documented for the route's operation, a JSON body must match the documented schema
 * (ajv, JSON Schema 2020-12), a documented empty answer must be empty, and the documented
 * required headers (the rate-limit headers) must be there. A path no documented route matches may
 * only answer with the error body.
 */

export interface ObservedAnswer {
  method: string;
  /** The request path, with or without its query string. */
  path: string;
  status: number;
  headers: Headers;
  /** The body parsed as JSON when it was JSON, else its text; undefined when empty. */
  body: unknown;
}

type Json = Record<string, any>;

interface DocumentedPath {
  template: string;
  matcher: RegExp;
  /** Literal segments: a static route wins over a parameter at the same place, as in the edge's router. */
  literals: number;
  operations: Record<string, Json>;
}

interface Api {
  version: ApiVersion;
  base: string;
  id: string;
  document: Json;
  paths: DocumentedPath[];
}

const ajv = new Ajv2020({ strict: false, validateFormats: false, allErrors: true });
let apis: Api[] | undefined;

function loadApis(): Api[] {
  apis ??= (['v3', 'v4'] as const).map((version) => {
    const document = buildOpenApiDocument(version);
    const id = `urn:svc:openapi:${version}`;
    ajv.addSchema(document, id);
    const paths = Object.entries(document.paths as Record<string, Json>).map(([template, operations]) => {
      const segments = template.split('/').filter(Boolean);
      const pattern = segments.map((s) => (s.startsWith('{') ? '[^/]+' : s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))).join('/');
      return { template, matcher: new RegExp(`^/${pattern}/?$`), literals: segments.filter((s) => !s.startsWith('{')).length, operations };
    });
    return { version, base: APIS[version].base, id, document, paths };
  });
  return apis;
}

const escapePointer = (segment: string) => segment.replace(/~/g, '~0').replace(/\//g, '~1');
const validators = new Map<string, ValidateFunction>();

function validatorAt(api: Api, pointer: string[]): ValidateFunction {
  const ref = `${api.id}#/${pointer.map(escapePointer).join('/')}`;
  let validate = validators.get(ref);
  if (!validate) validators.set(ref, (validate = ajv.compile({ $ref: ref })));
  return validate;
}

/** Follows a `$ref` to `#/components/...` inside the document. */
function resolve(api: Api, value: Json): { value: Json; pointer?: string[] } {
  if (typeof value?.$ref !== 'string') return { value };
  const pointer = value.$ref.replace(/^#\//, '').split('/');
  return { value: pointer.reduce((node: Json, key) => node[key], api.document), pointer };
}

const describeErrors = (validate: ValidateFunction) => (validate.errors ?? []).map((e) => `${e.instancePath || '(root)'} ${e.message}${e.params ? ` ${JSON.stringify(e.params)}` : ''}`).join('; ');

/** What is wrong with an answer by the documents: an empty list when it conforms. */
export function conformanceProblems(answer: ObservedAnswer): string[] {
  const pathname = answer.path.split('?')[0]!;
  if (isOpenApiDocument(answer.method, pathname)) return [];
  const api = loadApis().find((a) => pathname.startsWith(`${a.base}/`));
  if (!api) return [];
  const where = `${answer.method} ${pathname} -> ${answer.status}`;
  const relative = pathname.slice(api.base.length);
  const method = answer.method.toLowerCase();
  const path = api.paths.filter((p) => p.operations[method] && p.matcher.test(relative)).sort((a, b) => b.literals - a.literals)[0];
  const operation = path?.operations[method];
  if (!path || !operation) {
    // Refused before or without a route: only the error body.
    if (answer.status < 400) return [`${where}: ${answer.status} from a route the ${api.version} document does not describe`];
    const validate = validatorAt(api, ['components', 'schemas', 'ErrorBody']);
    return validate(answer.body) ? [] : [`${where}: not the error body: ${describeErrors(validate)}`];
  }
  const operationAt = ['paths', path.template, answer.method.toLowerCase()];
  const documented = operation.responses[String(answer.status)] as Json | undefined;
  if (!documented) return [`${where}: status ${answer.status} is not documented for ${operation.operationId} (documented: ${Object.keys(operation.responses).join(', ')})`];
  const { value: response, pointer } = resolve(api, documented);
  const responseAt = pointer ?? [...operationAt, 'responses', String(answer.status)];
  const problems: string[] = [];
  for (const [name, header] of Object.entries((response.headers ?? {}) as Json)) {
    if (resolve(api, header).value.required && !answer.headers.has(name)) problems.push(`${where}: header ${name} is missing`);
  }
  const content = response.content as Json | undefined;
  const contentType = (answer.headers.get('content-type') ?? '').split(';')[0]!.trim();
  if (!content) {
    if (answer.body !== undefined && answer.body !== '') problems.push(`${where}: a body where ${operation.operationId} documents none`);
    return problems;
  }
  if (content['*/*']) return problems;
  if (content['text/event-stream']) {
    if (contentType !== 'text/event-stream') return [...problems, `${where}: Content-Type ${contentType || '(none)'} where server-sent events are documented`];
    // Each data line is JSON of the documented event schema, where one is documented; `[DONE]` ends a v4 stream.
    if (!(content['text/event-stream'] as Record<string, unknown>)['x-event-schema']) return problems;
    const validate = validatorAt(api, [...responseAt, 'content', 'text/event-stream', 'x-event-schema']);
    for (const line of String(answer.body ?? '').split('\n')) {
      if (!line.startsWith('data: ') || line === 'data: [DONE]') continue;
      if (!validate(JSON.parse(line.slice(6)))) problems.push(`${where}: an event does not match ${operation.operationId}'s event schema: ${describeErrors(validate)}`);
    }
    return problems;
  }
  if (!content['application/json']) return [...problems, `${where}: no JSON content documented`];
  if (contentType !== 'application/json') return [...problems, `${where}: Content-Type ${contentType || '(none)'} where JSON is documented`];
  const validate = validatorAt(api, [...responseAt, 'content', 'application/json', 'schema']);
  if (!validate(answer.body)) problems.push(`${where}: the body does not match ${operation.operationId}'s ${answer.status} schema: ${describeErrors(validate)}`);
  return problems;
}

/** Throws when the answer does not conform to the documents. */
export function assertConforms(answer: ObservedAnswer): void {
  const problems = conformanceProblems(answer);
  if (problems.length) throw new Error(`the answer does not conform to the OpenAPI document:\n${problems.join('\n')}`);
}
