/**
 * Child process of the bench: runs the handlers in this process, and sends back over IPC
 * - their warm overhead: the time of one invocation with the store answering at once (a stub
 *   document client), so what remains is middy, the body checks, the domain and the request log;
 * - the store calls and consumed capacity of one add_batch and one allocate, against DynamoDB
 *   Local at DYNAMODB_ENDPOINT, and of one allocate routed to a destination among batches at three
 *   locations;
 * - the read units of one allocate of a SKU with 1, 50 and 200 exhausted batches behind it;
 * - the time and units of one PATCH that moves a hundred lines to another batch;
 * - the time and units of whole orders of 1, 5 and 25 lines;
 * - the time, units and calls of placing and of confirming a hold of 1 and of 5 lines, and the
 *   calls of one allocate on a batch that carries holds, expired ones among them;
 * - the time, units and calls of placing, confirming and releasing a hold, and of an allocate, on
 *   a batch that carries no other hold, and on one that carries 10,000 active ones.
 * Its stdout (the request log) is the parent's to redirect.
 */
import { randomUUID } from 'node:crypto';
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { createAllocationsHandler } from '../../functions/allocations';
import { createBatchesHandler } from '../../functions/batches';
import type { HttpResult } from '../../functions/http/route';
import { DynamoDbBatchRepository } from '../../functions/store/batch-repository';
import type { DocumentSender } from '../../functions/store/store-calls';
import { stockRangeItems } from '../../functions/store/batches';
import { LOCATIONS_PARTITION } from '../../functions/store/locations';
import { worldAt } from '../../functions/store/world';
import { createDocumentClient, createDynamoDbClient } from '../../functions/store/client';
import { ensureTable } from '../../local/table';
import { lambdaContext, postEvent, routeEvent } from '../../test/support/events';
import { type AllocateUnderHolds, type CostUnderActiveHolds, type HoldCost, measureAllocateUnderHolds, measureHolds, measureUnderActiveHolds } from './hold-cost';
import { type OrderCost, measureOrders } from './order-cost';
import { storeActiveHolds } from './stored-holds';
import { type PatchCost, measurePatchMoving } from './patch-cost';
import { type StoreCall, meterRequestCost, skuWithHistory } from './request-cost';
import { median, percentile } from './stats';

const WARM_UP_INVOCATIONS = 2_000;
const MEASURED_INVOCATIONS = 20_000;

export interface WarmOverhead {
  readonly medianMicroseconds: number;
  readonly p99Microseconds: number;
}

/** The read units of one allocate, by the number of exhausted batches of its SKU. */
export type ReadUnitsByHistory = readonly { readonly exhaustedBatches: number; readonly readUnits: number | undefined }[];

export interface HandlerMeasurements {
  readonly warmOverhead: { readonly allocate: WarmOverhead; readonly addBatch: WarmOverhead };
  readonly requestCost: {
    readonly allocate: StoreCall[];
    readonly addBatch: StoreCall[];
    readonly routedAllocate: StoreCall[];
    readonly splitAllocate: StoreCall[];
    /** A shipment of the allocated line, whole; an adjustment by a delta; a count as of a minute before the shipment. */
    readonly shipment: StoreCall[];
    readonly adjustment: StoreCall[];
    readonly count: StoreCall[];
    /** A page of the SKU's history, after the changes above. */
    readonly history: StoreCall[];
  };
  readonly readUnitsByHistory: ReadUnitsByHistory;
  readonly patchMovingLines: PatchCost;
  readonly orders: readonly OrderCost[];
  readonly holds: readonly HoldCost[];
  readonly allocateUnderHolds: AllocateUnderHolds;
  readonly underActiveHolds: readonly CostUnderActiveHolds[];
}

/** The order sizes measured: one line, a few, and the most an order may hold. */
const ORDER_SIZES = [1, 5, 25];

/** The PATCH measured: one that moves a hundred lines. */
const LINES_MOVED_BY_PATCH = 100;

const EXHAUSTED_BATCHES = [1, 50, 200];

/** A hold of one line, and one of a few: placing reads each SKU, so its cost grows with the lines. */
const HOLD_SIZES = [1, 5];

/** The holds on the batch of the allocate that must stay one read and one transaction. */
const HOLDS_ON_THE_BATCH = { activeHolds: 3, expiredHolds: 3 };

/** A batch with no hold, and one with a big drop's carts on it: what a hold or an allocate costs must not grow with them. */
const ACTIVE_HOLDS_ON_THE_BATCH = [0, 10_000] as const;

const STUB_SKU = 'STUB-SKU';

/**
 * DynamoDB's happy path without DynamoDB: the SKU has one batch with plenty in stock, no location is
 * stored (the built-in `default` alone; read once, then kept by the repository), and every write succeeds.
 */
const instantStore: DocumentSender = {
  send: (async (command: unknown) => {
    if (!(command instanceof QueryCommand)) return {};
    if (command.input.ExpressionAttributeValues?.[':partition'] === LOCATIONS_PARTITION) return { Items: [] };
    return { Items: stockRangeItems(STUB_SKU, [{ ref: 'stub-batch', sku: STUB_SKU, qty: 1e9, available: 1e9, eta: null }]) };
  }) as DocumentSender['send'],
};

const expectStatus = (result: HttpResult, statusCode: number, what: string) => {
  if (result.statusCode !== statusCode) throw new Error(`${what} answered ${result.statusCode}: ${result.body}`);
};

const measureWarmOverhead = async (): Promise<HandlerMeasurements['warmOverhead']> => {
  const repository = new DynamoDbBatchRepository(instantStore, 'stubbed');
  const allocate = createAllocationsHandler(repository);
  const addBatch = createBatchesHandler(repository);
  const samples = { allocate: [] as number[], addBatch: [] as number[] };

  for (let invocation = 0; invocation < WARM_UP_INVOCATIONS + MEASURED_INVOCATIONS; invocation++) {
    const measured = invocation >= WARM_UP_INVOCATIONS;
    // Events are built outside the timed span: they are API Gateway's work, and the body parser
    // consumes them, so each invocation needs its own.
    const allocateEvent = postEvent('/allocate', { orderid: `order-${invocation}`, sku: STUB_SKU, qty: 1 });
    const allocateContext = lambdaContext();
    let startedAt = performance.now();
    expectStatus(await allocate(allocateEvent, allocateContext), 201, 'allocate');
    if (measured) samples.allocate.push((performance.now() - startedAt) * 1000);

    const addBatchEvent = postEvent('/add_batch', { ref: `batch-${invocation}`, sku: STUB_SKU, qty: 10, eta: null });
    const addBatchContext = lambdaContext();
    startedAt = performance.now();
    expectStatus(await addBatch(addBatchEvent, addBatchContext), 201, 'add_batch');
    if (measured) samples.addBatch.push((performance.now() - startedAt) * 1000);
  }
  const summary = (microseconds: number[]): WarmOverhead => ({
    medianMicroseconds: median(microseconds),
    p99Microseconds: percentile(microseconds, 0.99),
  });
  return { allocate: summary(samples.allocate), addBatch: summary(samples.addBatch) };
};

const meteredRepository = async () => {
  const tableName = `bench-request-cost-${randomUUID().slice(0, 8)}`;
  const adminClient = createDynamoDbClient();
  await ensureTable(adminClient, tableName);
  adminClient.destroy();
  const meter = meterRequestCost(createDocumentClient());
  /** The same table through a clock an hour behind: what it holds for a minute has expired by the others' clock. */
  const anHourAgo = () => new DynamoDbBatchRepository(meter.sender, tableName, undefined, undefined, undefined, worldAt(() => Date.now() - 3_600_000));
  const storeHolds = (batch: { sku: string; ref: string }, holdids: string[], expiresAt: string) =>
    storeActiveHolds(meter.sender, tableName, batch, holdids, expiresAt, Date.now());
  return { meter, repository: new DynamoDbBatchRepository(meter.sender, tableName), anHourAgo, storeHolds };
};

const measureRequestCost = async (): Promise<HandlerMeasurements['requestCost']> => {
  const { meter, repository } = await meteredRepository();
  const callsOf = async (what: string, invoke: () => Promise<HttpResult>): Promise<StoreCall[]> => {
    meter.takeCalls();
    expectStatus(await invoke(), 201, what);
    return meter.takeCalls();
  };
  const sku = `sku-${randomUUID()}`;
  // A shipment too, so the allocation's query returns more than one batch.
  await repository.addBatch({ ref: `shipment-${randomUUID()}`, sku, qty: 10, available: 10, eta: '2030-01-01' });

  const ref = `batch-${randomUUID()}`;
  const addBatchEvent = postEvent('/add_batch', { ref, sku, qty: 10, eta: null });
  const addBatch = await callsOf('add_batch', () => createBatchesHandler(repository)(addBatchEvent, lambdaContext()));
  const orderid = `order-${randomUUID()}`;
  const allocateEvent = postEvent('/allocate', { orderid, sku, qty: 1 });
  // A warm process, which read the locations it routes by within 30 s, as every allocation but one in 30 s finds it.
  await repository.routingLocations();
  const allocate = await callsOf('allocate', () => createAllocationsHandler(repository)(allocateEvent, lambdaContext()));
  const countedAt = new Date(Date.now() - 60_000).toISOString();
  const shipmentEvent = postEvent('/shipments', { shipmentid: `parcel-${randomUUID()}`, orderid, lines: [{ sku, qty: 1 }] });
  const shipment = await callsOf('shipment', () => createBatchesHandler(repository)(shipmentEvent, lambdaContext()));
  const adjustmentEvent = postEvent('/adjustments', { adjustmentid: `found-${randomUUID()}`, ref, reason: 'found', delta: 1 });
  const adjustment = await callsOf('adjustment', () => createBatchesHandler(repository)(adjustmentEvent, lambdaContext()));
  const countEvent = postEvent('/adjustments', { adjustmentid: `count-${randomUUID()}`, ref, reason: 'counted', qty: 10, counted_at: countedAt });
  const count = await callsOf('count', () => createBatchesHandler(repository)(countEvent, lambdaContext()));
  meter.takeCalls();
  const historyEvent = routeEvent('GET /skus/{sku}/history', { pathParameters: { sku } });
  expectStatus(await createBatchesHandler(repository)(historyEvent, lambdaContext()), 200, 'history');
  const history = meter.takeCalls();

  // The same SKU at two more places, and a line sent to a destination one of them serves nearest.
  const places = [
    { id: `north-${randomUUID()}`, name: 'North', priority: 1, serves: ['FR'], position: { lat: 50.6, lng: 3.1 } },
    { id: `south-${randomUUID()}`, name: 'South', priority: 1, serves: ['FR', 'ES'], position: { lat: 43.3, lng: 5.4 } },
  ];
  const batches = createBatchesHandler(repository);
  for (const place of places) {
    expectStatus(await batches(routeEvent('PUT /locations/{id}', { pathParameters: { id: place.id }, body: place }), lambdaContext()), 201, 'PUT location');
    expectStatus(await batches(postEvent('/add_batch', { ref: `batch-${randomUUID()}`, sku, qty: 10, eta: null, location: place.id }), lambdaContext()), 201, 'add_batch');
  }
  await repository.routingLocations();
  const routedEvent = postEvent('/allocate', { orderid: `order-${randomUUID()}`, sku, qty: 1, destination: { country: 'FR', position: { lat: 44, lng: 5 } } });
  const routedAllocate = await callsOf('routed allocate', () => createAllocationsHandler(repository)(routedEvent, lambdaContext()));
  // A line no one batch holds, split over batches at two of the places.
  const splitEvent = postEvent('/allocate', { orderid: `order-${randomUUID()}`, sku, qty: 15, split: 'locations' });
  const splitAllocate = await callsOf('split allocate', () => createAllocationsHandler(repository)(splitEvent, lambdaContext()));
  return { allocate, addBatch, routedAllocate, splitAllocate, shipment, adjustment, count, history };
};

const measureReadUnitsByHistory = async (): Promise<ReadUnitsByHistory> => {
  const { meter, repository } = await meteredRepository();
  const allocate = createAllocationsHandler(repository);
  const figures = [];
  for (const exhaustedBatches of EXHAUSTED_BATCHES) {
    const sku = await skuWithHistory(repository, exhaustedBatches);
    // A warm process: the Query measured is the stock's, not the locations' read once in 30 s,
    // which making the history may have outlasted.
    await repository.routingLocations();
    meter.takeCalls();
    expectStatus(await allocate(postEvent('/allocate', { orderid: `order-${randomUUID()}`, sku, qty: 1 }), lambdaContext()), 201, 'allocate');
    const query = meter.takeCalls().find(({ operation }) => operation === 'Query');
    figures.push({ exhaustedBatches, readUnits: query?.capacityUnits });
  }
  return figures;
};

const measurePatchMovingLines = async (): Promise<PatchCost> => {
  const { meter, repository } = await meteredRepository();
  return measurePatchMoving(repository, meter, LINES_MOVED_BY_PATCH);
};

const measureOrderSizes = async (): Promise<OrderCost[]> => {
  const { meter, repository } = await meteredRepository();
  const costs = [];
  for (const lines of ORDER_SIZES) costs.push(await measureOrders(repository, meter, lines));
  return costs;
};

const measureHoldCosts = async (): Promise<Pick<HandlerMeasurements, 'holds' | 'allocateUnderHolds' | 'underActiveHolds'>> => {
  const { meter, repository, anHourAgo, storeHolds } = await meteredRepository();
  const holds = [];
  for (const lines of HOLD_SIZES) holds.push(...(await measureHolds(repository, meter, lines)));
  const underActiveHolds = await measureUnderActiveHolds(repository, meter, ACTIVE_HOLDS_ON_THE_BATCH, storeHolds);
  return { holds, allocateUnderHolds: await measureAllocateUnderHolds(repository, anHourAgo(), meter, HOLDS_ON_THE_BATCH), underActiveHolds };
};

const measurements: HandlerMeasurements = {
  warmOverhead: await measureWarmOverhead(),
  requestCost: await measureRequestCost(),
  readUnitsByHistory: await measureReadUnitsByHistory(),
  patchMovingLines: await measurePatchMovingLines(),
  orders: await measureOrderSizes(),
  ...(await measureHoldCosts()),
};
process.send?.(measurements);
process.disconnect?.();
