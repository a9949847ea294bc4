import { Command } from '@commander-js/extra-typings';
import { randomUUID } from 'node:crypto';
import { collect, formatOption, jsonOption, tenantIdOption } from '../../command.ts';
import type { CommandContext } from '../../context.ts';
import { invalidInput } from '../../errors.ts';
import type { ChatRequest } from '../../services/chat.service.ts';
import { DEFAULT_STAGE } from '../../services/chat.constants.ts';

/** A conversation's name, as v4 chat takes it. */
const CONVERSATION_NAME_MAX = 200;

/** The conversation's name as the shell takes it back in `--conversation-id` (quoted when it has spaces or symbols). */
export const shellWord = (name: string) => (/^[\w.:@/+-]+$/.test(name) ? name : `'${name.replace(/'/g, `'\\''`)}'`);

/** `--param key=value`: a number, `true`, `false` or `null` as that JSON value, anything else as text. */
function paramValue(text: string): string | number | boolean | null {
  if (text === 'true' || text === 'false' || text === 'null') return JSON.parse(text) as boolean | null;
  if (/^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?$/.test(text)) return Number(text);
  return text;
}

/** `chat send` and `chat stream`: the same argument and options. */
export function chatCommand(name: 'send' | 'stream', description: string) {
  return new Command(name)
    .description(description)
    .argument('<message>', 'the message to send')
    .requiredOption('--workflow <id>', 'the workflow key to chat with')
    .option('--stage <stage>', 'the stage of the workflow', DEFAULT_STAGE)
    .option('--conversation-id <id>', `continue this conversation, or start one under this name (1-${CONVERSATION_NAME_MAX} characters); a new one named by a generated UUID when omitted, printed on stderr`)
    .option('--param <key=value>', 'a value for the stage prompt\'s {{key}}, or temperature / max_tokens (repeatable; numbers, true, false and null are sent as JSON)', collect, [] as string[])
    .addOption(tenantIdOption())
    .addOption(formatOption())
    .addOption(jsonOption());
}

/** The request of the command's message and options; a conversation name empty or too long is E305 before any call. */
export async function chatRequest(
  ctx: CommandContext,
  message: string,
  options: { workflow: string; stage: string; conversationId?: string; param: string[]; tenantId?: string },
): Promise<ChatRequest> {
  const name = options.conversationId;
  if (name !== undefined && (name.length === 0 || name.length > CONVERSATION_NAME_MAX)) {
    throw invalidInput(`--conversation-id must be 1-${CONVERSATION_NAME_MAX} characters, not ${name.length}`);
  }
  if (!message.trim()) throw invalidInput('the message is empty');
  const { parseParam } = await import('../../services/publicapi.service.ts');
  const params = Object.fromEntries(options.param.map((p) => parseParam(p)).map(([key, value]) => [key, paramValue(value)]));
  return {
    tenantId: await ctx.tenantId(options.tenantId),
    workflow: options.workflow,
    stage: options.stage,
    message,
    conversationId: options.conversationId ?? randomUUID(),
    params,
  };
}
