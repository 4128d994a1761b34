import type { Allocation } from '../domain/model';
import type { BatchRepository } from '../domain/ports';
import { allocate, allocateOrder, cancelAllocation, orderAllocations } from '../domain/services';
import { json, noContent, route, routedHandler } from './http/route';
import type { AllocationsRouteKey } from './http/route-keys';
import { orderLineSchema, orderSchema } from './http/schemas';
import { batchRepository } from './store/repository';

/** Every field named, so that what the store holds beside them never reaches a client. */
const lineView = ({ sku, qty, batchref }: Allocation) => ({ sku, qty, batchref });

/** Order lines: allocating one, or a whole order's, reading an order's, and cancelling one. */
export const createAllocationsHandler = (repository: BatchRepository) =>
  routedHandler<AllocationsRouteKey>(repository, [
    route('POST /allocate', {
      body: orderLineSchema,
      successOutcomes: { 200: 'AlreadyAllocated', 201: 'Allocated' },
      // 201 with the batch for a new line, 200 for an exact repeat of an allocated line.
      run: async ({ body }, store) => {
        const { batchref, created } = await allocate(body, store);
        return json(created ? 201 : 200, { batchref });
      },
    }),
    route('POST /orders', {
      body: orderSchema,
      successOutcomes: { 200: 'OrderAlreadyAllocated', 201: 'OrderAllocated' },
      // 201 when it allocated at least one new line, 200 when every line was already allocated.
      run: async ({ body }, store) => {
        const { lines, created } = await allocateOrder(body, store);
        return json(created ? 201 : 200, { orderid: body.orderid, lines: lines.map(lineView) });
      },
    }),
    route('GET /allocations/{orderid}', {
      successOutcomes: { 200: 'OrderRead' },
      run: async ({ pathParameters: { orderid } }, store) => {
        const lines = await orderAllocations(orderid, store);
        return json(200, { orderid, lines: lines.map(lineView) });
      },
    }),
    route('DELETE /allocations/{orderid}/{sku}', {
      successOutcomes: { 204: 'LineCancelled' },
      run: async ({ pathParameters: { orderid, sku } }, store) => {
        await cancelAllocation(orderid, sku, store);
        return noContent();
      },
    }),
  ]);

export const handler = createAllocationsHandler(batchRepository);
