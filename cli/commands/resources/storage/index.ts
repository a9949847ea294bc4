import { Command } from '@commander-js/extra-typings';
import { command as doctor } from './doctor.ts';
import { command as status } from './status.ts';

export const command = new Command('storage').description("The tenant's storage: status and doctor").addCommand(status).addCommand(doctor);
