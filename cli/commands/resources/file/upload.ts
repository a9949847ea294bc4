import { Command, Option } from '@commander-js/extra-typings';
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { basename } from 'node:path';
import { formatOption, jsonOption, tenantIdOption, withMeta } from '../../../command.ts';
import { contextOf } from '../../../context.ts';
import { invalidInput } from '../../../errors.ts';
import { renderResource } from '../_render.ts';

export const command = withMeta(
  new Command('upload')
    .description("Upload a file into a resource's file property, with a progress bar on a terminal")
    .argument('<type>', 'object type key or PascalCase name')
    .argument('<id>', 'resource id')
    .argument('<property>', 'the file property, as the type declares it')
    .argument('<path>', 'the file to upload')
    .addOption(tenantIdOption())
    .addOption(new Option('--content-type <type>', 'the file\'s media type').default('application/octet-stream'))
    .option('--filename <name>', 'the name stored with the file (default: the file name of <path>)')
    .addOption(formatOption())
    .addOption(jsonOption())
    .action(async (type, id, property, path, options, cmd) => {
      const { createResourcesService } = await import('../../../services/resources.service.ts');
      const ctx = contextOf(cmd);
      const file = await stat(path).catch((error: Error) => {
        throw invalidInput(`cannot read ${path}: ${error.message}`);
      });
      if (!file.isFile()) throw invalidInput(`${path} is not a file`);
      const size = file.size;
      const tenantId = await ctx.tenantId(options.tenantId);
      const resources = createResourcesService(await ctx.api());
      const answer = await ctx.out.progress(`Uploading ${basename(path)}`, size, async (advance) => {
        const { Readable } = await import('node:stream');
        const stream = createReadStream(path).on('data', (chunk) => advance(chunk.length));
        const body = Readable.toWeb(stream) as unknown as ReadableStream<Uint8Array>;
        return resources.uploadFile(tenantId, { type, id, property, filename: options.filename ?? basename(path), contentType: options.contentType, size, body });
      });
      ctx.out.data(answer, renderResource);
    }),
  { calls: ['POST /v4/data/resources/{tenantId}/{objectType}/{id}/files/{propertyName}'] },
);
