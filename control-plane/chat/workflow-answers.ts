import type { Actor } from '../identity/identity.schema.ts';
import type { AnswerRequest, SourceKind } from './answering.ts';
import { conversationIdOf } from './conversation-names.ts';
import { DEFAULT_ANSWER_TOKENS, DEFAULT_TEMPERATURE, MAX_ANSWER_TOKENS, type WorkflowChatInput } from './chat.schema.ts';
import { modelChoiceOf, stagesOf, type WorkflowBinding, type WorkflowConfig } from './workflow-config.ts';

/** Passages retrieval adds to an answer unless a chatbot configuration says otherwise. */
export const DEFAULT_RETRIEVED = 5;

/** What the caller may have retrieval search: documents need `documents.read`, resources `resources.read`. */
export const kindsFor = (actor: Actor): SourceKind[] => [
  ...(actor.permissions.has('documents.read') ? (['document'] as const) : []),
  ...(actor.permissions.has('resources.read') ? (['resource'] as const) : []),
];

/** `{{name}}` places of a stage prompt filled from the request's params; unknown names stay as written. */
const fillParams = (prompt: string, params: Record<string, unknown>) =>
  prompt.replace(/\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}/g, (place, name: string) => (Object.hasOwn(params, name) && params[name] !== null ? String(params[name]) : place));

/** What a new answer needs besides its question. */
export interface AnswerSpec {
  question: string;
  /** The conversation to continue; `createIfMissing` starts it under that id (v4: the client names new ones). */
  conversation: { id?: string; createIfMissing?: boolean; workflowKey?: string; stage?: string };
  request: Omit<AnswerRequest, 'question' | 'history' | 'signal'>;
}

/**
 * A v4 chat request as the answer to start, for a workflow whose runtime is available: the
 * system prompt of its AI profile, chatbot and stage (params filled in), the request's or the
 * profile's model settings, and retrieval as the chatbot configures it.
 */
export function answerSpecOf(actor: Actor, input: WorkflowChatInput, workflow: WorkflowConfig, binding: WorkflowBinding): AnswerSpec {
  const { chatbot, profile } = binding;
  const stage = stagesOf(workflow).find((s) => s.id === input.stage)!;
  const params = input.params;
  const systemPrompt = [profile?.systemPrompt, chatbot?.systemPrompt, stage.prompt].filter((p): p is string => !!p).map((p) => fillParams(p, params)).join('\n\n');
  const retrieval = chatbot?.retrieval?.enabled === false ? false : { kinds: kindsFor(actor), types: chatbot?.retrieval?.types, limit: chatbot?.retrieval?.limit ?? DEFAULT_RETRIEVED };
  return {
    question: input.message,
    conversation: { id: input.conversation_id === undefined ? undefined : conversationIdOf(input.conversation_id), createIfMissing: true, workflowKey: workflow.workflowKey, stage: stage.id },
    request: {
      systemPrompt: systemPrompt || undefined,
      temperature: (params.temperature as number | undefined) ?? profile?.temperature ?? DEFAULT_TEMPERATURE,
      maxTokens: Math.min(MAX_ANSWER_TOKENS, (params.max_tokens as number | undefined) ?? profile?.maxTokens ?? DEFAULT_ANSWER_TOKENS),
      retrieval,
      model: modelChoiceOf(profile),
    },
  };
}
