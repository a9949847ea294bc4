import { Command } from '@commander-js/extra-typings';
import { command as aggregate } from './aggregate.ts';
import { command as create } from './create.ts';
import { command as del } from './delete.ts';
import { command as get } from './get.ts';
import { command as list } from './list.ts';
import { command as query } from './query.ts';
import { command as schema } from './schema.ts';
import { command as search } from './search.ts';
import { command as update } from './update.ts';

export const command = new Command('resources')
  .description("A tenant's resources: list, read, write, query, aggregate, search")
  .addCommand(list)
  .addCommand(get)
  .addCommand(create)
  .addCommand(update)
  .addCommand(del)
  .addCommand(query)
  .addCommand(aggregate)
  .addCommand(search)
  .addCommand(schema);
