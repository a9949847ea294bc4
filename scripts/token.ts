/**
 * Prints an access token for a development user of the running platform, and nothing else on stdout:
 *   TOKEN=$(npm run -s token -- admin@acme.test)
 * The issuer is SVC_URL, or http://localhost:${PORT:-8080}.
 */
import { DEV_USERS } from '../api-edge/identity/dev-users.ts';
import { LoginFlowError, loginWithPkce } from '../api-edge/identity/login-flow.ts';

const email = process.argv.slice(2).find((arg) => arg !== '--');
const issuer = (process.env['SVC_URL'] || `http://localhost:${process.env['PORT'] || '8080'}`).replace(/\/+$/, '');

if (!email) {
  process.stderr.write('usage: npm run -s token -- <email>   (e.g. admin@acme.test)\n');
  process.exit(2);
}

try {
  const { accessToken } = await loginWithPkce({ issuer, email });
  process.stdout.write(`${accessToken}\n`);
} catch (err) {
  process.stderr.write(`${failureMessage(err, issuer, email)}\n`);
  process.exit(1);
}

function failureMessage(err: unknown, url: string, user: string): string {
  if (err instanceof LoginFlowError) {
    switch (err.code) {
      case 'unreachable':
        return `platform not reachable at ${url}: start it with \`npm start\``;
      case 'unknown_user':
        return `unknown user ${user} (seeded users: ${DEV_USERS.map((u) => u.email).join(', ')})`;
      case 'protocol':
        return `login failed against ${url}: ${err.message}`;
    }
  }
  return `login failed against ${url}: ${err instanceof Error ? err.message : String(err)}`;
}
