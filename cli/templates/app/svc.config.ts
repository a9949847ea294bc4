/**
 * The project's configuration, read by the svc command-line client (`svc dev`, `svc types`,
 * `svc template check`). Plain data with no imports, so the app needs no dependency to hold it.
 * Tenant and package profile live in `svc.project.json`, written by `svc init`.
 */
export default {
  app: {
    name: '{{appName}}',
    key: '{{appKey}}',
  },
  env: {
    /** Variables `svc dev` checks before it starts the server; E002 names the first one missing. */
    required: ['BASE_URL_PUBLIC_API', 'SVC_IDP_CLIENT_ID'],
    /** The file the server and `svc dev` read them from (the environment wins over it). */
    file: '.env.local',
  },
  /** The object types of the app, validated by `svc types validate` and seeded by `svc types seed`. */
  objectTypes: 'src/svc.config/object-types.ts',
};
