/**
 * The app's object types: `svc types validate` checks them, `svc types seed` creates or updates
 * them in the tenant, `svc types pull` writes what the tenant has to object-types.generated.ts.
 * Names are PascalCase; the key (the type in resource paths) defaults to their kebab-case.
 */
export const objectTypes = [
  {
    name: 'Task',
    schema: {
      type: 'object',
      required: ['title'],
      properties: {
        title: { type: 'string', maxLength: 200 },
        done: { type: 'boolean' },
        dueDate: { type: 'string' },
      },
    },
    indexes: ['done'],
    searchFields: ['title'],
  },
];
