import { Command } from '@commander-js/extra-typings';
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { basename } from 'node:path';
import { Readable } from 'node:stream';
import { formatOption, jsonOption, tenantIdOption, withMeta } from '../../command.ts';
import { contextOf } from '../../context.ts';
import { invalidInput } from '../../errors.ts';
import type { ProcessingMode } from '../../services/documents.service.ts';
import { renderDocuments } from './_render.ts';

/** `docs upload` and `docs classify`: one file sent as it is read, with a progress bar when stderr is a terminal. */
export function uploadCommand(name: 'upload' | 'classify', mode: ProcessingMode, description: string, call: string) {
  return withMeta(
    new Command(name)
      .description(description)
      .argument('<file>', 'the file to send')
      .addOption(tenantIdOption())
      .addOption(formatOption())
      .addOption(jsonOption())
      .action(async (path, options, cmd) => {
        const { createDocumentsService } = await import('../../services/documents.service.ts');
        const ctx = contextOf(cmd);
        const file = await stat(path).catch((error: Error) => {
          throw invalidInput(`cannot read ${path}: ${error.message}`);
        });
        if (!file.isFile()) throw invalidInput(`${path} is not a file`);
        const tenantId = await ctx.tenantId(options.tenantId);
        const documents = createDocumentsService(await ctx.api());
        const filename = basename(path);
        const answer = await ctx.out.progress(`${mode === 'full' ? 'Uploading' : 'Classifying'} ${filename}`, file.size, (advance) => {
          const stream = createReadStream(path).on('data', (chunk) => advance(chunk.length));
          const body = Readable.toWeb(stream) as unknown as ReadableStream<Uint8Array>;
          return documents.upload(tenantId, mode, { filename, size: file.size, body });
        });
        ctx.out.data(answer, renderDocuments);
      }),
    { calls: [call] },
  );
}
