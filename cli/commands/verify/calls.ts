import { Command } from '@commander-js/extra-typings';
import { formatOption, jsonOption, tenantIdOption, withMeta } from '../../command.ts';
import { contextOf } from '../../context.ts';
import { EXIT_CODES, invalidInput } from '../../errors.ts';
import { DEFAULT_STAGE } from '../../services/chat.constants.ts';
import { renderReport } from './_render.ts';

export const command = withMeta(
  new Command('calls')
    .description("Make the calls an application of the tenant makes, once each, and report which answered (read-only unless --include-chat)")
    .addOption(tenantIdOption())
    .option('--resource-type <type>', 'object type to list, query and read (default: the first published)')
    .option('--resource-id <id>', 'resource to read (default: the first listed)')
    .option('--workflow <id>', 'workflow of the chat check')
    .option('--stage <stage>', 'stage of the chat check', DEFAULT_STAGE)
    .option('--tenant-record <id>', "tenant id or slug the user's memberships must include (default: the tenant)")
    .option('--user-email <email>', "look this user up and check the user's memberships")
    .option('--include-chat', 'also send a chat message (creates a conversation)')
    .option('--chat-message <text>', 'the chat message', 'Hello')
    .addOption(formatOption())
    .addOption(jsonOption())
    .action(async (options, cmd) => {
      const { createVerifyService } = await import('../../services/verify.service.ts');
      const ctx = contextOf(cmd);
      if (options.includeChat && !options.workflow) throw invalidInput('--include-chat needs --workflow');
      const tenantId = await ctx.tenantId(options.tenantId);
      const verify = createVerifyService(await ctx.api());
      const result = await ctx.out.spin('Verifying calls', () =>
        verify.calls({
          tenantId,
          resourceType: options.resourceType,
          resourceId: options.resourceId,
          tenantRecord: options.tenantRecord,
          userEmail: options.userEmail,
          chat: options.includeChat ? { workflow: options.workflow!, stage: options.stage, message: options.chatMessage } : undefined,
        }),
      );
      ctx.out.data(result, renderReport);
      if (result.summary.failed > 0) process.exitCode = EXIT_CODES.checksFailed;
    }),
  {
    calls: [
      'GET /health',
      'GET /v4/data/resources/object-types',
      'GET /v4/data/resources/schema/{tenantId}',
      'GET /v4/data/resources/{tenantId}/{objectType}',
      'POST /v4/data/resources/{tenantId}/query',
      'GET /v4/data/resources/{tenantId}/{objectType}/{id}',
      'GET /v4/platform/users/by-email',
      'GET /v4/platform/users/{oid}/memberships',
      'POST /v4/ai/chat/{tenantId}/{workflowId}/{stage}',
    ],
  },
);
