/** The built-in identity provider's endpoints, on the edge's origin. */
export const PROVIDER_ROUTES = {
  authorization: '/oauth2/v2.0/authorize',
  token: '/oauth2/v2.0/token',
  jwks: '/oauth2/v2.0/keys',
  userinfo: '/oauth2/v2.0/userinfo',
  end_session: '/oauth2/v2.0/logout',
  /** Token revocation (RFC 7009): `svc logout` revokes its refresh token here. */
  revocation: '/oauth2/v2.0/revoke',
  device_authorization: '/oauth2/v2.0/devicecode',
  /** Where a user enters (or confirms) the code a device without a browser shows. */
  code_verification: '/oauth2/v2.0/device',
} as const;

/** The scopes it grants. */
export const PROVIDER_SCOPES = ['openid', 'offline_access', 'email', 'profile'] as const;

/** The public client of the API reference page (`/docs`): Swagger UI's authorization code flow with PKCE. */
export const DOCS_CLIENT_ID = 'svc-docs';
/** Where Swagger UI receives the authorization code. */
export const DOCS_REDIRECT_PATH = '/docs/oauth2-redirect.html';
