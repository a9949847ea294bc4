/**
 * The files of a project's object types, apart from the service so that the commands can offer them in their options
 * without loading the service when the client starts.
 */

export const OBJECT_TYPES_FILE = 'src/svc.config/object-types.ts';
export const GENERATED_FILE = 'src/svc.config/object-types.generated.ts';
