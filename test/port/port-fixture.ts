import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import { createHttpControlPlane } from '../../api-edge/control-plane-http.ts';
import { DEV_USERS } from '../../api-edge/identity/dev-users.ts';
import { createTokenVerifier } from '../../api-edge/identity/token-verifier.ts';
import { createLocalDirectoryBlobStore } from '../../control-plane/blobs/local-directory.ts';
import type { BlobStore } from '../../control-plane/blobs/blob-store.ts';
import type { CallContext, ControlPlane } from '../../control-plane/contracts.ts';
import { createDb, type Db } from '../../control-plane/db/client.ts';
import { seedDevelopmentData } from '../../control-plane/identity/dev-seed.ts';
import { developmentTenants } from '../../control-plane/tenants/tenant-ports.ts';
import { createInProcessControlPlane } from '../../control-plane/app/in-process.ts';
import { createControlPlaneServer } from '../../control-plane/app/server.ts';
import { apiServicesOf, createServices, type Services } from '../../control-plane/app/services.ts';
import { generateControlPlaneToken } from '../../control-plane/app/control-plane-token.ts';

export interface PortFixture {
  db: Db;
  services: Services;
  blobs: BlobStore;
  /** The database's application name of this fixture's connections, to find them in pg_stat_activity. */
  application: string;
  tenantIds: Map<string, string>;
  uploadLimitBytes: number;
  /** The control-plane HTTP server's URL, and the credential it requires of callers. */
  url: string;
  callerToken: string;
  /** Both implementations of the port, over the same services. */
  ports: { 'in-process': ControlPlane; http: ControlPlane };
  /** The call context of a development user, with a real signed token (verified by the HTTP server) and its identity. */
  as(email: string, tenantHint?: string): Promise<CallContext>;
  close(): Promise<void>;
}

const ISSUER = 'urn:svc:test-port';
const AUDIENCE = 'urn:svc:api';

/**
 * The control plane's services over the test database, served by a real control-plane HTTP server
 * on a free port, and reached through both port implementations. Tokens are signed here with a key
 * of the fixture's own and verified by the server as it verifies any issuer's.
 */
export async function startPortFixture(options: { databaseUrl: string; uploadLimitBytes: number }): Promise<PortFixture> {
  const application = `port-test-${randomUUID().slice(0, 8)}`;
  const url = new URL(options.databaseUrl);
  url.searchParams.set('application_name', application);
  const db = createDb(url.toString(), { systemMax: 4, max: 4 });
  const tenantIds = await seedDevelopmentData(db, developmentTenants);
  const blobRoot = await mkdtemp(join(tmpdir(), 'svc-port-blobs-'));
  const blobs = createLocalDirectoryBlobStore(blobRoot);
  const services = createServices({ db, blobs, uploadLimitBytes: options.uploadLimitBytes });
  const api = apiServicesOf(services);

  const { privateKey, publicKey } = await generateKeyPair('ES256');
  const publicJwk = { ...(await exportJWK(publicKey)), kid: 'port-test', alg: 'ES256', use: 'sig' };
  const verifyToken = createTokenVerifier({ issuer: ISSUER, audience: AUDIENCE, jwks: { keys: [publicJwk] } });
  const callerToken = generateControlPlaneToken();
  const server = createControlPlaneServer({ services: api, verifyToken, callerToken });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const serverUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    db,
    services,
    blobs,
    application,
    tenantIds,
    uploadLimitBytes: options.uploadLimitBytes,
    url: serverUrl,
    callerToken,
    ports: { 'in-process': createInProcessControlPlane(api), http: createHttpControlPlane(serverUrl, callerToken) },
    async as(email, tenantHint) {
      const user = DEV_USERS.find((u) => u.email === email);
      if (!user) throw new Error(`no development user ${email}`);
      const token = await new SignJWT({ email: user.email, email_verified: true, name: user.name, ...(user.tenant ? { tid: user.tenant } : {}) })
        .setProtectedHeader({ alg: 'ES256', kid: 'port-test' })
        .setIssuer(ISSUER)
        .setAudience(AUDIENCE)
        .setSubject(user.sub)
        .setIssuedAt()
        .setExpirationTime('10m')
        .sign(privateKey);
      return { identity: await verifyToken(token), token, ...(tenantHint ? { tenantHint } : {}) };
    },
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await db.close();
      await rm(blobRoot, { recursive: true, force: true });
    },
  };
}
