/** The base path of REST v3 (browser-facing, through the BFF). */
export const V3_BASE = '/api/svc/v3';
/** The base path of the platform API v4. */
export const V4_BASE = '/v4';
