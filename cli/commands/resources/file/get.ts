import { Command } from '@commander-js/extra-typings';
import { writeFile } from 'node:fs/promises';
import { formatOption, jsonOption, tenantIdOption, withMeta } from '../../../command.ts';
import { contextOf } from '../../../context.ts';
import { invalidInput } from '../../../errors.ts';
import { fields } from '../../../output.ts';

export const command = withMeta(
  new Command('get')
    .description("Download a resource's file: to --output, else its bytes to stdout")
    .argument('<type>', 'object type key or PascalCase name')
    .argument('<id>', 'resource id')
    .argument('<property>', 'the file property')
    .addOption(tenantIdOption())
    .option('--output <path>', 'write the file here')
    .addOption(formatOption())
    .addOption(jsonOption())
    .action(async (type, id, property, options, cmd) => {
      const { createResourcesService } = await import('../../../services/resources.service.ts');
      const ctx = contextOf(cmd);
      const tenantId = await ctx.tenantId(options.tenantId);
      const resources = createResourcesService(await ctx.api());
      const file = await ctx.out.spin(`Downloading ${property}`, () => resources.downloadFile(tenantId, type, id, property));
      if (options.output === undefined) {
        // The bytes are the data: stdout carries nothing else.
        if (ctx.out.format === 'json') throw invalidInput('--format json needs --output <path>: the file itself is not JSON');
        process.stdout.write(file.bytes);
        return;
      }
      await writeFile(options.output, file.bytes).catch((error: Error) => {
        throw invalidInput(`cannot write --output ${options.output}: ${error.message}`);
      });
      const saved = { path: options.output, filename: file.filename ?? null, contentType: file.contentType, size: file.bytes.length };
      ctx.out.data(saved, (s, style) =>
        fields([['saved', s.path], ['filename', s.filename ?? ''], ['contentType', s.contentType], ['size', `${s.size} bytes`]], style),
      );
    }),
  { calls: ['GET /v4/data/resources/{tenantId}/{objectType}/{id}/files/{propertyName}'] },
);
