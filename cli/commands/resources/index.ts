import { Command } from '@commander-js/extra-typings';
import { TOP_LEVEL } from '../_top-level.ts';
import { command as aggregate } from './aggregate.ts';
import { command as batchCreate } from './batch-create.ts';
import { command as batchDelete } from './batch-delete.ts';
import { command as batchUpdate } from './batch-update.ts';
import { command as create } from './create.ts';
import { command as del } from './delete.ts';
import { command as doctor } from './doctor.ts';
import { command as file } from './file/index.ts';
import { command as get } from './get.ts';
import { command as list } from './list.ts';
import { command as query } from './query.ts';
import { command as schema } from './schema.ts';
import { command as search } from './search.ts';
import { command as storage } from './storage/index.ts';
import { command as syncSchema } from './sync-schema.ts';
import { command as update } from './update.ts';

export const command = new Command('resources')
  .description(TOP_LEVEL.resources.description)
  .addCommand(list)
  .addCommand(get)
  .addCommand(create)
  .addCommand(update)
  .addCommand(del)
  .addCommand(query)
  .addCommand(aggregate)
  .addCommand(search)
  .addCommand(schema)
  .addCommand(batchCreate)
  .addCommand(batchUpdate)
  .addCommand(batchDelete)
  .addCommand(file)
  .addCommand(storage)
  .addCommand(doctor)
  .addCommand(syncSchema);
