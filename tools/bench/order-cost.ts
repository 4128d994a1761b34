import { randomUUID } from 'node:crypto';
import type { BatchRepository } from '../../domain/ports';
import { addBatch } from '../../domain/services';
import { allocateOrder } from '../../domain/order-services';
import { promiseCart } from '../../domain/promise-services';
import { type RequestCostMeter, unitsOf } from './request-cost';
import { median } from './stats';

export interface OrderCost {
  readonly lines: number;
  readonly medianMilliseconds: number;
  /** Read and write units of one order as DynamoDB Local reports them, and its store calls. */
  readonly readUnits: number;
  readonly writeUnits: number;
  readonly calls: number;
  /** The promise of the same lines, made just before each order (POST /promises): its median time, read units and store calls. */
  readonly promise: { readonly medianMilliseconds: number; readonly readUnits: number; readonly calls: number };
}

/** Enough orders of each size for a median that one slow moment does not move. */
const ORDERS_PER_SIZE = 15;

/**
 * Whole orders of `lines` lines, each line a SKU of its own with stock to spare, allocated one
 * after the other the way the allocations handler does (domain/order-services.ts, allocateOrder): the
 * median time of one order, and the units and calls of one; and of the promise of its lines made
 * just before it (domain/promise-services.ts, promiseCart).
 */
export const measureOrders = async (repository: BatchRepository, meter: RequestCostMeter, lines: number): Promise<OrderCost> => {
  const skus = Array.from({ length: lines }, () => `sku-${randomUUID()}`);
  for (const sku of skus) await addBatch({ ref: `${sku}-batch`, sku, qty: 1_000_000, eta: null }, repository);
  const milliseconds: number[] = [];
  const promiseMilliseconds: number[] = [];
  let calls = meter.takeCalls();
  let promiseCalls = calls;
  for (let index = 0; index < ORDERS_PER_SIZE; index++) {
    meter.takeCalls();
    const promisedAt = performance.now();
    await promiseCart({ lines: skus.map((sku) => ({ sku, qty: 1 })) }, repository);
    promiseMilliseconds.push(performance.now() - promisedAt);
    promiseCalls = meter.takeCalls();
    const startedAt = performance.now();
    await allocateOrder({ orderid: `order-${randomUUID()}`, lines: skus.map((sku) => ({ sku, qty: 1 })) }, repository);
    milliseconds.push(performance.now() - startedAt);
    calls = meter.takeCalls();
  }
  return {
    lines,
    medianMilliseconds: median(milliseconds),
    readUnits: unitsOf(calls, ['Query']),
    writeUnits: unitsOf(calls, ['TransactWriteItems']),
    calls: calls.length,
    promise: { medianMilliseconds: median(promiseMilliseconds), readUnits: unitsOf(promiseCalls, ['Query']), calls: promiseCalls.length },
  };
};
