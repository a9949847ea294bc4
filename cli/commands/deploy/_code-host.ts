import { Option } from '@commander-js/extra-typings';

export const repoOption = () => new Option('--repo <owner/name>', "the repository (default: the git remote origin's)");

/** What every deploy command starts with: the deploy service, the code host's client (E002 without a token) and the repository. */
export async function codeHost(repo: string | undefined) {
  const deploy = await import('../../services/deploy.service.ts');
  const api = deploy.codeHostClient();
  return { deploy, api, repo: await deploy.resolveRepo(repo) };
}
