import { BadGatewayError, ConflictError, NotImplementedError, ValidationError } from '../errors.ts';
import { LOOPBACK_HOSTS, TOKEN_ENDPOINT_AUTH_METHODS, type TokenEndpointAuthMethod } from './idp-apps.schema.ts';

const TIMEOUT_MS = 10_000;
/** A registration answer larger than this is not a client's metadata. */
const MAX_ANSWER_BYTES = 256 * 1024;

/** What the platform registers for an app: an authorization code client (PKCE) with a refresh token. */
export interface ClientMetadata {
  displayName: string;
  redirectUris: string[];
  tokenEndpointAuthMethod: TokenEndpointAuthMethod;
}

/** A client as the provider registered it, with what manages it (RFC 7592) when the provider offers that. */
export interface RegisteredClient extends ClientMetadata {
  clientId: string;
  clientSecret?: string;
  management?: { registrationClientUri: string; registrationAccessToken: string };
}

export interface ExternalProviderSettings {
  issuer: string;
  /** The initial access token RFC 7591 registration may require (`AUTH_REGISTRATION_TOKEN`). */
  initialAccessToken?: string;
}

const isLoopback = (uri: string) => {
  const url = new URL(uri);
  return url.protocol === 'http:' && LOOPBACK_HOSTS.has(url.hostname);
};

/** RFC 7591 client metadata for `client`. A client whose redirect URIs are all loopback ones is a native app (RFC 8252). */
function requestBody(client: ClientMetadata, clientId?: string): Record<string, unknown> {
  const native = client.redirectUris.every(isLoopback);
  return {
    ...(clientId ? { client_id: clientId } : {}),
    client_name: client.displayName,
    redirect_uris: client.redirectUris,
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    token_endpoint_auth_method: client.tokenEndpointAuthMethod,
    application_type: native ? 'native' : 'web',
  };
}

async function readJson(response: Response, what: string): Promise<Record<string, unknown>> {
  const declared = Number(response.headers.get('content-length') ?? 0);
  if (declared > MAX_ANSWER_BYTES) throw new BadGatewayError(`the identity provider's ${what} is too large`);
  const text = await response.text();
  if (text.length > MAX_ANSWER_BYTES) throw new BadGatewayError(`the identity provider's ${what} is too large`);
  try {
    const value = JSON.parse(text) as unknown;
    if (value && typeof value === 'object' && !Array.isArray(value)) return value as Record<string, unknown>;
  } catch {
    // reported below
  }
  throw new BadGatewayError(`the identity provider's ${what} is not a JSON object`);
}

const text = (value: unknown) => (typeof value === 'string' && value !== '' ? value : undefined);

/**
 * Dynamic client registration (RFC 7591) at an external OIDC provider, found through its discovery
 * document, and updates through registration management (RFC 7592) when the provider returned a
 * registration URI and access token. Failures of the provider are 502 `BAD_GATEWAY`; metadata it
 * refuses is a 400 naming the field; a provider without a registration endpoint is 501.
 */
export function createDynamicRegistration(settings: ExternalProviderSettings, fetchImpl: typeof fetch = fetch) {
  const issuer = settings.issuer.replace(/\/+$/, '');

  async function call(url: string, init: RequestInit, what: string): Promise<Response> {
    try {
      return await fetchImpl(url, { ...init, redirect: 'error', signal: AbortSignal.timeout(TIMEOUT_MS) });
    } catch (error) {
      throw new BadGatewayError(`the identity provider at ${issuer} could not be reached for its ${what}`, { cause: (error as Error).message });
    }
  }

  async function registrationEndpoint(): Promise<string> {
    const response = await call(`${issuer}/.well-known/openid-configuration`, { headers: { accept: 'application/json' } }, 'discovery document');
    if (!response.ok) throw new BadGatewayError(`the identity provider at ${issuer} answered ${response.status} for its discovery document`);
    const document = await readJson(response, 'discovery document');
    if (text(document.issuer)?.replace(/\/+$/, '') !== issuer) throw new BadGatewayError(`the discovery document of ${issuer} names another issuer`);
    const endpoint = text(document.registration_endpoint);
    if (!endpoint) {
      throw new NotImplementedError(
        `the identity provider at ${issuer} does not offer dynamic client registration (RFC 7591, no registration_endpoint in its discovery document): register the app there`,
        { issuer },
      );
    }
    if (!/^https?:\/\//i.test(endpoint)) throw new BadGatewayError(`the registration endpoint of ${issuer} is not an http(s) URL`);
    return endpoint;
  }

  /** The client the provider answered with, checked against what was asked for. */
  async function registeredFrom(response: Response, asked: ClientMetadata, what: string, previous?: RegisteredClient['management']): Promise<RegisteredClient> {
    if (response.status === 400) {
      const refusal = await readJson(response, `refusal of the ${what}`).catch((): Record<string, unknown> => ({}));
      const issue = `was refused by the identity provider: ${text(refusal.error_description) ?? text(refusal.error) ?? 'invalid client metadata'}`;
      throw ValidationError.field(refusal.error === 'invalid_redirect_uri' ? 'redirectUris' : '(body)', issue);
    }
    if (response.status === 401 || response.status === 403) {
      throw new BadGatewayError(`the identity provider at ${issuer} refused the platform's ${what} (${response.status}): check the registration access token`);
    }
    if (!response.ok) throw new BadGatewayError(`the identity provider at ${issuer} answered ${response.status} to the ${what}`);
    const answer = await readJson(response, `answer to the ${what}`);
    const clientId = text(answer.client_id);
    if (!clientId) throw new BadGatewayError(`the identity provider's answer to the ${what} names no client_id`);
    // A method the platform does not know stays the one asked for: the platform never uses it itself.
    const answered = text(answer.token_endpoint_auth_method);
    const method = TOKEN_ENDPOINT_AUTH_METHODS.find((known) => known === answered) ?? asked.tokenEndpointAuthMethod;
    const clientSecret = text(answer.client_secret);
    if (asked.tokenEndpointAuthMethod !== 'none' && !clientSecret && !previous) throw new BadGatewayError(`the identity provider registered a confidential client without a secret`);
    const uri = text(answer.registration_client_uri);
    const token = text(answer.registration_access_token);
    const redirectUris = Array.isArray(answer.redirect_uris) ? answer.redirect_uris.filter((u): u is string => typeof u === 'string') : asked.redirectUris;
    return {
      clientId,
      ...(clientSecret ? { clientSecret } : {}),
      displayName: text(answer.client_name) ?? asked.displayName,
      redirectUris,
      tokenEndpointAuthMethod: method,
      ...(uri && token ? { management: { registrationClientUri: uri, registrationAccessToken: token } } : previous ? { management: previous } : {}),
    };
  }

  const jsonHeaders = (token?: string) => ({
    'content-type': 'application/json',
    accept: 'application/json',
    ...(token ? { authorization: `Bearer ${token}` } : {}),
  });

  return {
    issuer,

    /** Registers a new client (RFC 7591 §3.1). */
    async register(client: ClientMetadata): Promise<RegisteredClient> {
      const endpoint = await registrationEndpoint();
      const response = await call(endpoint, { method: 'POST', headers: jsonHeaders(settings.initialAccessToken), body: JSON.stringify(requestBody(client)) }, 'registration request');
      return registeredFrom(response, client, 'registration request');
    },

    /** Replaces a registered client's metadata (RFC 7592 §2.2); a client registered without management cannot be changed here. */
    async update(clientId: string, management: RegisteredClient['management'] | undefined, client: ClientMetadata): Promise<RegisteredClient> {
      if (!management) {
        throw new ConflictError(`the identity provider at ${issuer} gave no registration management for client ${clientId}: change its redirect URIs and name there`, { field: 'redirectUris' });
      }
      const response = await call(
        management.registrationClientUri,
        { method: 'PUT', headers: jsonHeaders(management.registrationAccessToken), body: JSON.stringify(requestBody(client, clientId)) },
        'registration update',
      );
      const updated = await registeredFrom(response, client, 'registration update', management);
      if (updated.clientId !== clientId) throw new BadGatewayError(`the identity provider's registration update names another client`);
      return updated;
    },
  };
}

export type DynamicRegistration = ReturnType<typeof createDynamicRegistration>;
