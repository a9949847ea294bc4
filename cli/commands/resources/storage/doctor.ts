import { doctorCommand } from '../_doctor.ts';

export const command = doctorCommand();
