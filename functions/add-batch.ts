import type { BatchRepository } from '../domain/ports';
import { addBatch } from '../domain/services';
import { jsonRoute, text } from './http/route';
import { batchSchema } from './http/schemas';
import { batchRepository } from './store/repository';

/** POST /add_batch: 201 with the plain word OK, as the spec has it. */
export const createAddBatchHandler = (repository: BatchRepository) =>
  jsonRoute({
    route: 'POST /add_batch',
    schema: batchSchema,
    successOutcomes: { 201: 'BatchAdded' },
    run: async (batch, { deadline }) => {
      await addBatch(batch, repository.withDeadline(deadline));
      return text(201, 'OK');
    },
  });

export const handler = createAddBatchHandler(batchRepository);
