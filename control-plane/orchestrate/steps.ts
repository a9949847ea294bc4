import { createHash } from 'node:crypto';
import type { ContextPassage } from '../ai/model.ts';
import type { AnsweringService } from '../chat/answering.ts';
import type { Actor } from '../identity/identity.schema.ts';
import type { ResourcesService } from '../resources/resources.service.ts';
import type { StepDefinition } from './orchestrate.schema.ts';
import { applyInput } from './templates.ts';

type Json = Record<string, unknown>;

/** Earlier steps' output as passages the model can quote: one per record, or the whole output. */
function passagesFrom(outputs: Record<string, unknown>): ContextPassage[] {
  const passages: ContextPassage[] = [];
  for (const [stepId, output] of Object.entries(outputs)) {
    const items = (output as { items?: Array<{ id: string; type: string; data: Json }> })?.items;
    if (Array.isArray(items)) {
      for (const item of items) {
        const facts = Object.entries(item.data)
          .map(([k, v]) => `${k}: ${typeof v === 'object' ? JSON.stringify(v) : String(v)}.`)
          .join(' ');
        passages.push({ source: `${item.type}/${item.id}`, sourceType: 'resource', text: facts });
      }
    } else if (typeof (output as { answer?: unknown })?.answer === 'string') {
      passages.push({ source: `step/${stepId}`, sourceType: 'step', text: (output as { answer: string }).answer });
    }
  }
  return passages;
}

export interface StepDeps {
  resources: ResourcesService;
  /** The platform's one answering service, as chat uses it. */
  answering: Pick<AnsweringService, 'complete'>;
}

/** A UUID derived from a name, so a retried step addresses the same record (RFC 9562 version 8 layout). */
export function deterministicUuid(name: string): string {
  const bytes = createHash('sha256').update(name).digest().subarray(0, 16);
  bytes[6] = (bytes[6]! & 0x0f) | 0x80;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** Runs one step for `actor` (the execution's starter in its tenant) and returns the step's output. */
export async function runStepOf(
  deps: StepDeps,
  actor: Actor,
  step: StepDefinition,
  input: Json,
  earlier: Record<string, unknown>,
  executionId: string,
): Promise<Json> {
  const config = applyInput(step.config, input);
  switch (step.type) {
    case 'resource_create': {
      const data = (config.data ?? {}) as Json;
      const resource = await deps.resources.createOnce(actor, String(config.type ?? ''), deterministicUuid(`${executionId}:${step.id}`), data);
      return { resource };
    }
    case 'delay':
      throw new Error('a delay step runs in the workflow, not as an activity');
    case 'resource_query': {
      const page = await deps.resources.list(actor, {
        type: String(config.type ?? ''),
        filter: Object.fromEntries(Object.entries((config.filter as Json) ?? {}).map(([k, v]) => [k, String(v)])),
        where: config.where as Json | undefined,
        sort: config.sort as string | undefined,
        limit: Math.min(100, Math.max(1, Number(config.limit ?? 20))),
      });
      return { items: page.items, total: page.total };
    }
    case 'ai_chat': {
      const question = String(config.prompt ?? input.question ?? input.message ?? '');
      // Earlier steps' output is the context; `retrieval: true` also searches the tenant's documents and resources.
      const completion = await deps.answering.complete(actor, {
        question,
        systemPrompt: config.systemPrompt ? String(config.systemPrompt) : undefined,
        temperature: typeof config.temperature === 'number' ? config.temperature : 0.7,
        maxTokens: Math.min(4096, Math.max(1, Number(config.maxTokens ?? 256) || 256)),
        passages: passagesFrom(earlier),
        retrieval: config.retrieval === true ? { kinds: ['document', 'resource'], limit: 5 } : false,
      });
      return { answer: completion.text, citations: completion.citations, usage: completion.usage };
    }
  }
}
