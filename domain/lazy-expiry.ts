import { batchesToFree } from './holds';
import { type Batch, type BatchPreference, type Order, type OrderPlan, byPreference, heldOf, locationOf, passesOverSpread } from './model';
import type { BatchRepository } from './ports';
import { type Eligibility, eligibleBatches, rankBatchesForLine, routedPreference } from './routing';

/*
 * What a read round of an allocation, an order, a hold or a transfer checks before it chooses:
 * lazy expiry (domain/holds.ts, batchesToFree), the batch the rule picks for each line, and
 * whether that pick passes over a spread batch, which a settled read counts first.
 */

/**
 * What lazy expiry (domain/holds.ts, batchesToFree) found for a line of a read: units of expired
 * holds given back; nothing to free; batches left unread for the next round (freedForLines); or
 * batches it had to free with no expired units on them now, named with the units they held and had
 * available as read.
 */
export type ExpiryFound = 'freed' | 'nothing-to-free' | 'more-to-read' | { readonly noneExpiredOn: string };

/**
 * The most batches lazy expiry reads the holds of in one round of an order or a hold: an order of
 * many lines over many places reads a bounded number each round, and the next round goes on from
 * what this one freed.
 */
export const MAX_BATCHES_FREED_PER_ROUND = 16;

/**
 * The most batches one order or hold reads the holds of to better a plan it can place: four rounds'
 * worth, so that a request over more batches whose bound has come than that (a drop's carts all
 * expired at once) answers rather than spends its rounds, and leaves the rest to the sweeper. A line
 * the plan refuses, or puts on a shipment, is read for past it (freedForLines).
 */
export const MAX_BATCHES_FREED_PER_REQUEST = 4 * MAX_BATCHES_FREED_PER_ROUND;

/** Gives back the units of expired holds on these batches, as many as a line of `qty` may need on each. */
const freedOn = async (qty: number, toFree: readonly Batch[], repository: BatchRepository, now: number): Promise<ExpiryFound> => {
  if (toFree.length === 0) return 'nothing-to-free';
  const freed = await Promise.all(toFree.map((batch) => repository.freeExpiredHolds(batch, now, qty - Math.max(batch.available, 0))));
  if (freed.some((units) => units > 0)) return 'freed';
  return { noneExpiredOn: toFree.map((batch) => `${batch.ref}:${heldOf(batch)}:${batch.available}`).join(',') };
};

/**
 * Lazy expiry: gives back the units of expired holds on the batches that a line of `qty` may need
 * them on, picked by the rule or not (LazyExpiry says whether the caller reads again).
 */
export const freedExpiredHolds = (
  qty: number,
  batches: readonly Batch[],
  picked: Batch | undefined,
  repository: BatchRepository,
  preference: BatchPreference = byPreference,
): Promise<ExpiryFound> => {
  const now = repository.currentTime();
  return freedOn(qty, batchesToFree(qty, batches, now, picked, preference), repository, now);
};

/**
 * Lazy expiry over the rounds of one request: whether a round reads again before it chooses. When
 * units came back, the rule picks on the batches as they are now. When none of the units held on
 * the batches to free had expired, they are active holds' units, or expired ones another request
 * (the sweeper) gave back after the read: the read is made again, until one finds the batches
 * holding and offering what the read before it found, whose held units are then active holds'.
 * Each read made again follows a change another request made, and the caller's rounds bound them.
 */
export class LazyExpiry {
  private lastNoneExpired?: string;
  /** The batches whose holds this request has read (freedForLines): a round reads the others first. */
  private readonly readOn = new Set<string>();

  /** How many batches this request has read the holds of. */
  get batchesRead(): number {
    return this.readOn.size;
  }

  hasRead({ ref }: Batch): boolean {
    return this.readOn.has(ref);
  }

  read({ ref }: Batch): void {
    this.readOn.add(ref);
  }

  readAgain(found: ExpiryFound | readonly ExpiryFound[]): boolean {
    const all = Array.isArray(found) ? (found as readonly ExpiryFound[]) : [found as ExpiryFound];
    const noneExpired = all.flatMap((one) => (typeof one === 'object' ? [one.noneExpiredOn] : [])).join(';');
    const again = all.includes('freed') || all.includes('more-to-read') || (noneExpired !== '' && noneExpired !== this.lastNoneExpired);
    this.lastNoneExpired = noneExpired === '' || all.includes('freed') ? undefined : noneExpired;
    return again;
  }
}

/**
 * The batch the plan put each line on, by SKU (a split line's last part's: on a shipment when any
 * part is, since parts come in stock first); for an order refused, the one the single-line rule
 * would pick for each line (none for a line no batch can take): what lazy expiry and the settled
 * read judge the choice by.
 */
export const picksOf = (
  orderid: string,
  lines: Order['lines'],
  stockBySku: ReadonlyMap<string, readonly Batch[] | undefined>,
  eligibility: Eligibility,
  plan: OrderPlan,
): ReadonlyMap<string, Batch | undefined> =>
  plan.kind === 'placed'
    ? new Map(plan.placements.map(({ allocation: { sku }, batch, parts }) => [sku, parts?.at(-1)?.batch ?? batch]))
    : new Map(lines.map(({ sku, qty }) => [sku, rankBatchesForLine(stockBySku.get(sku) ?? [], { orderid, sku, qty }, eligibility)[0]]));

/**
 * Whether the choice, for some line of an order or a hold, passes over a spread batch it may take
 * from (passesOverSpread). A line in several parts may take fewer on a settled read from any spread
 * batch, whose pieces may hold more than read, as a whole line may take a better batch.
 */
export const linesPassOverSpread = (
  lines: Order['lines'],
  stockBySku: ReadonlyMap<string, readonly Batch[] | undefined>,
  eligibility: Eligibility,
  { plan, picks }: { readonly plan: OrderPlan; readonly picks: ReadonlyMap<string, Batch | undefined> },
): boolean => {
  const preference = routedPreference(eligibility);
  const inParts = new Set(plan.kind === 'placed' ? plan.placements.flatMap(({ allocation: { sku }, parts }) => ((parts?.length ?? 1) > 1 ? [sku] : [])) : []);
  return lines.some(({ sku }) => {
    const batches = eligibleBatches(stockBySku.get(sku) ?? [], eligibility);
    return inParts.has(sku) ? batches.some(({ pieces }) => pieces !== undefined) : passesOverSpread(batches, picks.get(sku), preference);
  });
};

/**
 * Lazy expiry for the lines of an order or a hold, each of its own SKU, on the batches it may take
 * from that are short for their line and may hold expired holds' units. Which of them:
 * - a plan refused: those of the lines it refuses, which nothing else changes;
 * - a plan from one place, every line in one part on a batch in stock: those the rule prefers to
 *   each line's pick (`picks`), since only a line's better batch can better it;
 * - else every one, whichever the plan picked, since a batch freed may let the whole order come
 *   from fewer places, or from a place with sooner shipments (domain/order-plans.ts, planOrder), or
 *   a split line in fewer parts.
 * At most MAX_BATCHES_FREED_PER_ROUND: first those of the lines its plan refuses or puts on a
 * shipment (`pressing`), then those it has not read yet, then the others, each in turns (every line's
 * first, counting those read before, then every line's second, and so on); 'more-to-read' when some
 * not yet read were left for the next round. Once the request has read
 * MAX_BATCHES_FREED_PER_REQUEST, only for the pressing lines.
 */
export const freedForLines = async (
  lines: Order['lines'],
  stockBySku: ReadonlyMap<string, readonly Batch[] | undefined>,
  eligibility: Eligibility,
  { plan, picks, placedAt = new Set() }: { readonly plan: OrderPlan; readonly picks: ReadonlyMap<string, Batch | undefined>; readonly placedAt?: ReadonlySet<string> },
  repository: BatchRepository,
  expiry: LazyExpiry,
): Promise<ExpiryFound[]> => {
  const preference = routedPreference(eligibility);
  const now = repository.currentTime();
  const refused = new Set(plan.kind === 'refused' ? plan.refusals.map(({ sku }) => sku) : []);
  const placements = plan.kind === 'placed' ? plan.placements : [];
  const lineByLine =
    placements.length === lines.length &&
    placements.every(({ batch, parts }) => batch.eta === null && (parts?.length ?? 1) === 1) &&
    new Set([...placedAt, ...placements.map(({ batch }) => locationOf(batch))]).size <= 1;
  const candidates = lines
    .flatMap(({ sku, qty }, line) => {
      if (refused.size > 0 && !refused.has(sku)) return [];
      const eligible = eligibleBatches(stockBySku.get(sku) ?? [], eligibility);
      const turnsBefore = eligible.filter((batch) => expiry.hasRead(batch)).length;
      const onShipment = (picks.get(sku)?.eta ?? null) !== null;
      return batchesToFree(qty, eligible, now, lineByLine ? picks.get(sku) : undefined, preference)
        .sort(preference)
        .map((batch, rank) => ({ line, turn: turnsBefore + rank, batch, read: expiry.hasRead(batch), pressing: refused.has(sku) || (onShipment && batch.eta === null) }));
    })
    .sort((a, b) => Number(b.pressing) - Number(a.pressing) || Number(a.read) - Number(b.read) || a.turn - b.turn || a.line - b.line);
  let allowed = MAX_BATCHES_FREED_PER_REQUEST - expiry.batchesRead;
  const toRead = candidates.filter(({ pressing, read }) => pressing || read || allowed-- > 0);
  const chosen = toRead.slice(0, MAX_BATCHES_FREED_PER_ROUND);
  for (const { batch } of chosen) expiry.read(batch);
  const found = await Promise.all(
    lines.map(({ qty }, line) =>
      freedOn(
        qty,
        chosen.filter((candidate) => candidate.line === line).map(({ batch }) => batch),
        repository,
        now,
      ),
    ),
  );
  const unreadLeft = toRead.slice(MAX_BATCHES_FREED_PER_ROUND).some(({ read }) => !read);
  return unreadLeft ? [...found, 'more-to-read'] : found;
};
