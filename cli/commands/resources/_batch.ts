import { Command, Option } from '@commander-js/extra-typings';
import { csv, formatOption, jsonInput, jsonOption, tenantIdOption, withMeta } from '../../command.ts';
import { contextOf } from '../../context.ts';
import { invalidInput } from '../../errors.ts';
import { table, type TextRenderer } from '../../output.ts';
import type { BatchAnswer } from '../../services/resources.service.ts';

const renderBatch: TextRenderer<BatchAnswer> = (answer, style) => {
  if ('deleted' in answer) return `Deleted ${answer.deleted} resource(s)`;
  const items = answer.data;
  return `${table(['ID', 'VERSION'], items.map((r) => [r.id, String(r.version)]), style)}\n${style.colors.dim(`${items.length} resource(s)`)}`;
};

const WHAT = {
  create: { description: 'Create several resources in one transaction (all or none)', items: 'an array of data objects' },
  update: { description: 'Replace several resources in one transaction, each at its version (all or none)', items: 'an array of {id, data, version}' },
  delete: { description: 'Delete several resources in one transaction (all or none; asks first unless --force)', items: 'an array of ids' },
} as const;

const hiddenUnless = <O extends Option>(shown: boolean, option: O): O => (shown ? option : option.hideHelp());

/** The items a batch input lists: the array itself, or the `items` of `{"items": [...]}` and nothing else. */
function listed(input: unknown): unknown[] | undefined {
  if (Array.isArray(input)) return input;
  if (typeof input !== 'object' || input === null) return undefined;
  const fields = input as Record<string, unknown>;
  return Array.isArray(fields['items']) && Object.keys(fields).length === 1 ? fields['items'] : undefined;
}

/** `resources batch-<operation> <type>`: the items from --data/--file (batch-delete: or --ids), one call. */
export function batchCommand(operation: 'create' | 'update' | 'delete') {
  const command = new Command(`batch-${operation}`)
    .description(WHAT[operation].description)
    .argument('<type>', 'object type key or PascalCase name')
    .addOption(tenantIdOption())
    .option('--data <json>', `the items, as ${WHAT[operation].items} (or {"items": [...]})`)
    .option('--file <path>', 'read the items from a JSON file (- for stdin)')
    // Only batch-delete shows these; the others refuse --ids.
    .addOption(hiddenUnless(operation === 'delete', new Option('--ids <csv>', 'comma-separated resource ids')))
    .addOption(hiddenUnless(operation === 'delete', new Option('--force', 'delete without asking')))
    .addOption(formatOption())
    .addOption(jsonOption())
    .action(async (type, options, cmd) => {
      const { createResourcesService } = await import('../../services/resources.service.ts');
      const ctx = contextOf(cmd);
      if (operation !== 'delete' && options.ids !== undefined) throw invalidInput(`--ids is for batch-delete; give the items of batch-${operation} with --data or --file`);
      const ids = csv(options.ids);
      if (ids && (options.data !== undefined || options.file !== undefined)) throw invalidInput('give --ids, --data or --file, not several');
      const items = ids ?? (await jsonInput(options));
      const list = listed(items);
      // The platform takes a batch delete's ids as an array or `{ids: [...]}`; `{"items": [...]}` is sent as the array.
      const body = operation === 'delete' && list ? { ids: list } : Array.isArray(items) ? { items } : items;
      const tenantId = await ctx.tenantId(options.tenantId);
      if (operation === 'delete' && !options.force) {
        const count = list ? list.length : '';
        await ctx.out.confirm(`Delete ${count} ${type} resource(s)?`.replace('  ', ' '), '--force');
      }
      const resources = createResourcesService(await ctx.api());
      const answer = await ctx.out.spin(`Batch ${operation} of ${type}`, () => resources.batch(tenantId, type, operation, body));
      ctx.out.data(answer, renderBatch);
    });
  return withMeta(command, { calls: [`POST /v4/data/resources/{tenantId}/{objectType}/batch/${operation}`], ...(operation === 'delete' ? { destructive: true } : {}) });
}
