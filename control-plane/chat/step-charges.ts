import type { Db } from '../db/client.ts';
import { deleteInBatches } from '../sweeps/sweeps.service.ts';
import { deletePastStepCharges } from './chat.repo.ts';

/**
 * The scheduled sweep of `ai_chat` step charges (each step's message counted once): those older than
 * any retry of their step are removed, never by the UTC day, so that a step charged before midnight
 * and retried after it is not counted again. Answers how many.
 */
export const sweepPastStepCharges = (db: Db): Promise<number> => deleteInBatches(db, deletePastStepCharges);
