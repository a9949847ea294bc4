import type { WorkflowDefinition } from './orchestrate.schema.ts';

/** Example workflows every tenant starts with. */
export const EXAMPLE_WORKFLOWS: WorkflowDefinition[] = [
  {
    id: 'project-briefing',
    name: 'Project briefing',
    description: 'Finds projects (optionally by status) and answers a question about them.',
    version: '1',
    steps: [
      {
        id: 'find-projects',
        name: 'Find projects',
        type: 'resource_query',
        config: { type: 'project', filter: { status: '{{input.status}}' }, sort: '-budget', limit: 10 },
      },
      {
        id: 'answer',
        name: 'Answer the question',
        type: 'ai_chat',
        config: { prompt: '{{input.question}}', maxTokens: 120 },
      },
    ],
  },
  {
    id: 'active-projects',
    name: 'Active projects',
    description: 'Lists active projects, largest budget first.',
    version: '1',
    steps: [
      {
        id: 'list-active',
        name: 'List active projects',
        type: 'resource_query',
        config: { type: 'project', filter: { status: 'active' }, sort: '-budget', limit: 20 },
      },
    ],
  },
  {
    id: 'project-intake',
    name: 'Project intake',
    description: 'Registers a project once, waits for the review window, then confirms it is on record.',
    version: '1',
    steps: [
      {
        id: 'register',
        name: 'Register the project',
        type: 'resource_create',
        config: { type: 'project', data: { name: '{{input.name}}', status: 'in-progress', budget: '{{input.budget}}', metadata: '{{input.metadata}}' } },
      },
      { id: 'review-window', name: 'Wait for the review window', type: 'delay', config: { ms: '{{input.reviewMs}}' } },
      { id: 'confirm', name: 'Confirm the record', type: 'resource_query', config: { type: 'project', filter: { name: '{{input.name}}' }, limit: 5 } },
    ],
  },
];
