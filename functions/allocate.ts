import type { BatchRepository } from '../domain/ports';
import { allocate } from '../domain/services';
import { json, jsonRoute } from './http/route';
import { orderLineSchema } from './http/schemas';
import { batchRepository } from './store/repository';

/** POST /allocate: 201 with the batch for a new line, 200 for an exact repeat of an allocated line. */
export const createAllocateHandler = (repository: BatchRepository) =>
  jsonRoute({
    route: 'POST /allocate',
    schema: orderLineSchema,
    successOutcomes: { 200: 'AlreadyAllocated', 201: 'Allocated' },
    run: async (line, { deadline }) => {
      const { batchref, created } = await allocate(line, repository.withDeadline(deadline));
      return json(created ? 201 : 200, { batchref });
    },
  });

export const handler = createAllocateHandler(batchRepository);
