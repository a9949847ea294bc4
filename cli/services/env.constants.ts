/**
 * The names of the configuration and env-file commands, apart from the service so that the commands can offer them in their options
 * without loading the service when the client starts.
 */

/** What `env list` shows in place of a secret's value. */
export const MASK = '********';

/** The variables `provision idp` writes: the app's OAuth client at the platform's identity provider. */
export const IDP_ENV = {
  clientId: 'SVC_IDP_CLIENT_ID',
  clientSecret: 'SVC_IDP_CLIENT_SECRET',
  issuer: 'SVC_IDP_ISSUER',
} as const;

/** The app (vertical) key `vertical select` writes. */
export const VERTICAL_KEY_ENV = 'SVC_VERTICAL_KEY';
