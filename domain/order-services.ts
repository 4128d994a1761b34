import { OrderLinesAlreadyAllocated, OrderLinesRoutedOtherwise, OrderLinesSplitOtherwise, OrderNotAllocated, TooManyParts, AllocationContended } from './errors';
import { LazyExpiry, freedForLines, linesPassOverSpread, picksOf } from './lazy-expiry';
import { routedStockOf } from './location-services';
import { type Allocation, type Order, type RoutedAllocation, locationOf, orderedQtyOf, partsOf, splitOf } from './model';
import { placedParts } from './shipments';
import type { BatchRepository, StockRead } from './ports';
import { planOrder } from './order-plans';
import { type Routing, isSameRouting, recordedRouting } from './routing';
import { MAX_ALLOCATION_ROUNDS, batchOrThrow, bySku, repeatOrRefused } from './services';

/*
 * A whole order (docs/api.md, POST /orders): every line allocated, or none, all of them planned at
 * once (domain/routing.ts, planOrder) and written in one transaction.
 */

export interface OrderOutcome {
  /** Every line of the request, sorted by sku, with its batch and that batch's location. */
  readonly lines: RoutedAllocation[];
  /**
   * How many of `lines` this request allocated; the others were already allocated with the same
   * qty. 0 for a repeat of the whole order, answered without taking stock.
   */
  readonly newLines: number;
}

/**
 * Allocates every line of an order, or none: all lines planned at once among the batches the
 * request may take from (planOrder: fewest lines on shipments, then fewest locations, then each
 * line by the single-line rule), all written in one transaction, each line recording the routing.
 * A line already allocated with the same qty and routing counts as done and keeps its batch; one
 * with another qty, or another routing, refuses the whole order. The lines still to place are then
 * planned again, the locations of those done counting as chosen already, so that they join them
 * where they can rather than make another parcel. When another request takes stock between the
 * read and the write, the order is read and planned again, a bounded number of times.
 */
export const allocateOrder = async (order: Order, repository: BatchRepository, routing: Routing = {}): Promise<OrderOutcome> => {
  const { orderid } = order;
  const lines = order.lines.map(({ sku, qty, split = order.split ?? 'none' }) => ({ sku, qty, split }));
  const done = new Map<string, RoutedAllocation>();
  let read: StockRead = { forTake: true };
  const expiry = new LazyExpiry();
  for (let round = 0; round < MAX_ALLOCATION_ROUNDS; round++) {
    const pending = lines.filter(({ sku }) => !done.has(sku));
    if (pending.length === 0) return { lines: bySku([...done.values()]), newLines: 0 };
    const [locations, ...stocks] = await Promise.all([repository.routingLocations(), ...pending.map(({ sku }) => repository.stockOf(sku, read))]);
    const routed = await repeatOrRefused(
      () => routedStockOf(pending, stocks, locations, routing, repository),
      async () => {
        const before = done.size;
        await takeExisting(orderid, lines, routing, await repository.allocationsOf(orderid), done, repository);
        return done.size > before ? 'lines-found' : undefined;
      },
    );
    // Lines of the order found made: the next round answers them, and routes what is left.
    if ('answered' in routed) continue;
    const { stockBySku, eligibility } = routed.routed;
    const placedAt = new Set([...done.values()].flatMap((line) => partsOf(line, line.location).map(({ location }) => location)));
    const plan = planOrder(orderid, pending, stockBySku, eligibility, placedAt);
    const picks = picksOf(orderid, pending, stockBySku, eligibility, plan);
    if (expiry.readAgain(await freedForLines(pending, stockBySku, eligibility, { plan, picks, placedAt }, repository, expiry))) continue;
    if (!read.settled && linesPassOverSpread(pending, stockBySku, eligibility, { plan, picks })) {
      read = { settled: true };
      continue;
    }
    // Lines the order has already, read once a plan is refused or too large: a repeat whose first
    // answer was lost after it committed, planned again on the stock it left, or an order adding lines.
    const foundMade = async () => {
      const before = done.size;
      await takeExisting(orderid, lines, routing, await repository.allocationsOf(orderid), done, repository);
      return done.size > before;
    };
    if (plan.kind === 'refused') {
      if (await foundMade()) continue;
      const outOfStock = new Set(plan.refusals.flatMap(({ sku, reason }) => (reason === 'out_of_stock' ? [sku] : [])));
      await repository.recordOutOfStock(
        pending.filter(({ sku }) => outOfStock.has(sku)).map(({ sku, qty }) => ({ orderid, sku, qty })),
        routing,
      );
      throw new OrderNotAllocated(orderid, plan.refusals, eligibility.noneBecause);
    }
    const placements = plan.placements.map((placement) => ({ ...placement, allocation: { ...placement.allocation, ...recordedRouting(routing) } }));
    const result = await repository.saveAllocations(placements);
    if (result.outcome === 'saved') {
      const placed = placements.map(({ allocation, batch }) => ({ ...allocation, location: locationOf(batch) }));
      return { lines: bySku([...done.values(), ...placed]), newLines: plan.placements.length };
    }
    if (result.outcome === 'lines-exist') await takeExisting(orderid, lines, routing, result.existing, done, repository);
    // Split lines whose parts need more writes than one transaction holds: the plan, not the stock, is at fault.
    if (result.outcome === 'too-many-writes' && !(await foundMade())) throw new TooManyParts('order', orderid, result.writes, result.maxWrites);
  }
  // Its last round may have found every line made: a repeat, answered as one.
  if (lines.every(({ sku }) => done.has(sku))) return { lines: bySku([...done.values()]), newLines: 0 };
  throw new AllocationContended(lines.map(({ sku }) => sku).join(', '), MAX_ALLOCATION_ROUNDS);
};

/**
 * Counts the order's lines already allocated with the asked qty, routing and split as done, each
 * with its batch's location (a whole line's read for it: a line records its routing, not where its
 * batch is; a split line's parts name theirs); any other qty, or then any other routing, or then any
 * other split, refuses the order.
 */
const takeExisting = async (
  orderid: string,
  lines: Order['lines'],
  routing: Routing,
  existing: readonly Allocation[],
  done: Map<string, RoutedAllocation>,
  repository: BatchRepository,
): Promise<void> => {
  const asked = new Map(lines.map(({ sku, qty }) => [sku, qty]));
  const ours = existing.filter(({ sku }) => asked.has(sku));
  const conflicting = ours.filter((line) => asked.get(line.sku) !== orderedQtyOf(line));
  if (conflicting.length > 0) throw new OrderLinesAlreadyAllocated(orderid, bySku(conflicting).map((line) => ({ sku: line.sku, qty: orderedQtyOf(line) })));
  const routedOtherwise = ours.filter((line) => !isSameRouting(line.routing, routing));
  if (routedOtherwise.length > 0) throw new OrderLinesRoutedOtherwise(orderid, bySku(routedOtherwise).map(({ sku }) => ({ sku })));
  const splits = new Map(lines.map(({ sku, split = 'none' }) => [sku, split]));
  const splitOtherwise = ours.filter((line) => splitOf(line) !== splits.get(line.sku));
  if (splitOtherwise.length > 0) throw new OrderLinesSplitOtherwise(orderid, bySku(splitOtherwise).map(({ sku }) => ({ sku })));
  const located = await Promise.all(
    ours
      .filter(({ sku }) => !done.has(sku))
      .map(async (line) => ({ ...line, location: (line.split ? placedParts(line)[0]?.location : undefined) ?? locationOf(await batchOrThrow(line.batchref, repository, line.sku)) })),
  );
  for (const line of located) done.set(line.sku, line);
};

