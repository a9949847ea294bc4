import { Command } from '@commander-js/extra-typings';
import { command as invite } from './invite.ts';
import { command as provisionMe } from './provision-me.ts';

export const command = new Command('user').description('Users of a tenant: invite, provision yourself').addCommand(invite).addCommand(provisionMe);
