/**
 * The chat command's defaults, apart from the service so that the commands can offer them in their options
 * without loading the service when the client starts.
 */

export const DEFAULT_STAGE = 'chat';
