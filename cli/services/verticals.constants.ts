/**
 * The defaults of `vertical create`, apart from the service so that the commands can offer them in their options
 * without loading the service when the client starts.
 */

export const DEFAULT_APP_SOURCE = 'svc-cli';
export const DEFAULT_APP_STATUS = 'pending';
