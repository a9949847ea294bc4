import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT, type JWTPayload } from 'jose';

/** The audience the platform's tokens are issued for (its default). */
const AUDIENCE = 'urn:svc:api';

/**
 * An external identity provider as token verification sees one: its keys at a JWKS URL, and
 * tokens it signs for the platform's audience, valid for an hour.
 */
export async function startKeyServer(kid: string) {
  const { publicKey, privateKey } = await generateKeyPair('RS256');
  const jwk = { ...(await exportJWK(publicKey)), kid, alg: 'RS256', use: 'sig' };
  const server: Server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ keys: [jwk] }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    issuer,
    jwksUrl: `${issuer}/jwks`,
    sign: (claims: JWTPayload & { sub: string }) =>
      new SignJWT(claims).setProtectedHeader({ alg: 'RS256', kid }).setIssuer(issuer).setAudience(AUDIENCE).setIssuedAt().setExpirationTime('1h').sign(privateKey),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

export type KeyServer = Awaited<ReturnType<typeof startKeyServer>>;
