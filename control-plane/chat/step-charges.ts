import type { Db } from '../db/client.ts';
import { deleteInBatches } from '../sweeps/sweeps.service.ts';
import { deletePastStepCharges } from './chat.repo.ts';

/**
 * The scheduled sweep of `ai_chat` step charges (each step's message counted once): those of days
 * before today (UTC) are removed, as today's count needs only today's. Answers how many.
 */
export const sweepPastStepCharges = (db: Db): Promise<number> => deleteInBatches(db, deletePastStepCharges);
