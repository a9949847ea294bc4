import { Command } from '@commander-js/extra-typings';
import { TOP_LEVEL } from './_top-level.ts';
import { command as classify } from './docs/classify.ts';
import { command as index } from './docs/index.ts';
import { command as upload } from './docs/upload.ts';

/** The `docs` noun: assembled here, beside its folder, as one of its verbs is `index` (`docs/index.ts`). */
export const command = new Command('docs')
  .description(TOP_LEVEL.docs.description)
  .addCommand(upload)
  .addCommand(classify)
  .addCommand(index);
