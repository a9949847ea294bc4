import { Command } from '@commander-js/extra-typings';
import { collect, formatOption, jsonInput, jsonOption, withMeta } from '../../command.ts';
import { contextOf } from '../../context.ts';
import type { HttpMethod } from '../../api/wire.ts';

/** `publicapi <method> <path>`: one command per HTTP method, all alike. */
export function methodCommand(method: HttpMethod) {
  let command = new Command(method.toLowerCase())
    .description(`${method} an allowed /v4/ path and print the answer`)
    .argument('<path>', 'a path beginning with /v4/ in an allowed route family')
    .option('--tenant-id <tenantId>', 'fills {tenantId} in the path, else is sent as the tenant_id query parameter')
    .option('--param <key=value>', 'query parameter (repeatable)', collect, [] as string[])
    .option('--data <json>', 'JSON body')
    .option('--file <path>', 'JSON body from a file (- for stdin)')
    .option('--include-headers', 'print the status and response headers with the body')
    .addOption(formatOption())
    .addOption(jsonOption());
  command = command.action(async (path, options, cmd) => {
    const { createPublicApiService, parseParam, preparePath } = await import('../../services/publicapi.service.ts');
    const ctx = contextOf(cmd);
    const params = options.param.map(parseParam);
    preparePath(path, params, options.tenantId);
    const body = await jsonInput(options, true);
    const publicapi = createPublicApiService(await ctx.api());
    const answer = await ctx.out.spin(`${method} ${path}`, () =>
      publicapi.call(method, path, { params, body, tenantId: options.tenantId }),
    );
    // An answer without a body (204) is null in JSON and prints nothing as text, as `gh api` does.
    const shown = answer.body === null ? '' : JSON.stringify(answer.body, null, 2);
    ctx.out.data(options.includeHeaders ? answer : answer.body, () => {
      if (!options.includeHeaders) return shown;
      const head = [`HTTP ${answer.status}`, ...Object.entries(answer.headers).map(([k, v]) => `${k}: ${v}`)].join('\n');
      return shown ? `${head}\n\n${shown}` : head;
    });
  });
  return withMeta(command, { calls: [`${method} /v4/{path}`], destructive: false });
}
