/**
 * What lazy expiry reads at scale: 30 locations stocking 25 SKUs, carts holding every unit at the 29
 * preferred ones (active holds, none expired), then one order of a unit of each SKU, routed to every
 * location, and the same order pinned to the 30th; then, the clock past the carts' expiry, the routed
 * order again, twice (the first reads and gives back what it may, the second meets what it left).
 * For each: its answer, its time, and its store calls by operation, the reads of held units among
 * them (docs/capacity.md, "Holds: what their cost depends on"). Run alone:
 * `npx tsx tools/bench/expiry-reads.ts`; it prints its figures as JSON.
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { DomainError, TransientFailure } from '../../domain/errors';
import { placeHold } from '../../domain/hold-services';
import { putLocation } from '../../domain/location-services';
import type { Routing } from '../../domain/routing';
import { addBatch } from '../../domain/services';
import { allocateOrder } from '../../domain/order-services';
import { DynamoDbBatchRepository } from '../../functions/store/batch-repository';
import { createDynamoDbClient } from '../../functions/store/client';
import { worldAt } from '../../functions/store/world';
import { startDynamoDbLocal } from '../../local/dynamodb-local';
import { ensureTable } from '../../local/table';
import { meterRequestCost } from './request-cost';

const LOCATIONS = 30;
const SKUS = 25;
const UNITS_PER_BATCH = 2;
/** Long enough that no cart's hold expires while the orders are sent. */
const HOLD_SECONDS = 3_600;
/** How long no call may arrive for the calls of an order to count as all made. */
const SETTLE_MS = 500;

export interface OrderReads {
  readonly answer: string;
  readonly milliseconds: number;
  /** Store calls by operation (`Query`, `TransactWriteItems`...). */
  readonly calls: Readonly<Record<string, number>>;
}

export interface ExpiryReads {
  readonly locations: number;
  readonly skus: number;
  readonly routed: OrderReads;
  readonly pinned: OrderReads;
  /** The routed order once the carts have expired, and the same order after it. */
  readonly routedAfterExpiry: OrderReads;
  readonly routedAgainAfterExpiry: OrderReads;
}

/**
 * `tables`: a client of DynamoDB Local, or of the simulator's memory store, which answers the same
 * calls in this process (tools/simulate/memory-store), so that a test of these counts does not wait
 * on a server for a setup of 750 batches.
 */
export const measureExpiryReads = async (tables: DynamoDBClient): Promise<ExpiryReads> => {
  const tableName = `expiry-reads-${randomUUID()}`;
  await ensureTable(tables, tableName);
  const meter = meterRequestCost(DynamoDBDocumentClient.from(tables));
  let expired = 0;
  const repository = new DynamoDbBatchRepository(meter.sender, tableName, undefined, undefined, undefined, worldAt(() => Date.now() + expired));
  const locations = Array.from({ length: LOCATIONS }, (_, index) => `loc${String(index).padStart(2, '0')}`);
  const skus = Array.from({ length: SKUS }, (_, index) => `sku${String(index).padStart(2, '0')}`);
  for (const [index, id] of locations.entries()) await putLocation({ id, name: id, priority: index, serves: ['*'] }, repository);
  for (const sku of skus) {
    for (const location of locations) await addBatch({ ref: `${sku}-${location}`, sku, qty: UNITS_PER_BATCH, eta: null, location }, repository);
  }
  for (const location of locations.slice(0, -1)) {
    await placeHold({ holdid: `cart-${location}`, lines: skus.map((sku) => ({ sku, qty: UNITS_PER_BATCH })), ttlSeconds: HOLD_SECONDS }, repository, { location });
  }
  meter.takeCalls();
  const order = async (routing: Routing): Promise<OrderReads> => {
    const startedAt = performance.now();
    let answer: string;
    try {
      const outcome = await allocateOrder({ orderid: `order-${randomUUID()}`, lines: skus.map((sku) => ({ sku, qty: 1 })) }, repository, routing);
      answer = `placed at ${[...new Set(outcome.lines.map(({ location }) => location))].join(', ')}`;
    } catch (error) {
      if (!(error instanceof DomainError || error instanceof TransientFailure)) throw error;
      answer = `${error.name}: ${error.message}`;
    }
    const milliseconds = Math.round(performance.now() - startedAt);
    // A request that gives up leaves the reads it sent at once in flight: they are its calls too.
    const made = [...meter.takeCalls()];
    for (let more = made.length; more > 0; ) {
      await sleep(SETTLE_MS);
      const late = meter.takeCalls();
      made.push(...late);
      more = late.length;
    }
    const calls: Record<string, number> = {};
    for (const { operation } of made) calls[operation] = (calls[operation] ?? 0) + 1;
    return { answer, milliseconds, calls };
  };
  const pinned = await order({ location: locations.at(-1) });
  const routed = await order({});
  expired = (HOLD_SECONDS + 1) * 1_000;
  const routedAfterExpiry = await order({});
  const routedAgainAfterExpiry = await order({});
  return { locations: LOCATIONS, skus: SKUS, routed, pinned, routedAfterExpiry, routedAgainAfterExpiry };
};

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const store = await startDynamoDbLocal();
  try {
    console.log(JSON.stringify(await measureExpiryReads(createDynamoDbClient(store.endpoint)), null, 2));
  } finally {
    await store.stop();
  }
}
