import { Command } from '@commander-js/extra-typings';
import { command as check } from './check.ts';

export const command = new Command('template').description("The project's scaffold files against the client's template").addCommand(check);
