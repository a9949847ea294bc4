import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { builtInIndexStatements } from './builtin-indexes.ts';

const migration = readFileSync(new URL('../db/migrations/0035_list_indexes.sql', import.meta.url), 'utf8');
const text = { type: 'string', maxLength: 100 };

describe('built-in types’ indexes', () => {
  it('are created by the migration with each field’s expression as the query engine compiles it', () => {
    const declared: Array<[string, Record<string, object>]> = [
      ['project', { status: text, budget: { type: 'number' }, name: text }],
      ['shared-workflow-config', { workflowKey: text }],
      ['vertical-product-config', { vertical: text, workflowKey: text }],
      ['shared-ai-profile', { profileKey: text }],
      ['shared-chatbot-config', { workflowKey: text }],
    ];
    for (const [key, properties] of declared) {
      for (const statement of builtInIndexStatements(key, { type: 'object', properties }, Object.keys(properties))) {
        if (statement.startsWith('create index')) expect(migration).toContain(statement);
        else expect(migration).toContain(statement.replace(/^create statistics if not exists \w+ /, ''));
      }
    }
  });
});
