import { DEFAULT_LOCATION_ID, type Location, allLocationsOf } from './locations';
import type { Routing } from './request-routing';

/** A customer's request for some quantity of one product. An order holds at most one line per SKU. */
export interface OrderLine {
  readonly orderid: string;
  readonly sku: string;
  readonly qty: number;
}

/**
 * Stock of one product: on the shelf when `eta` is null, otherwise a shipment due on `eta`
 * (a calendar date, `YYYY-MM-DD`, so dates compare as strings).
 */
export interface Batch {
  readonly ref: string;
  readonly sku: string;
  readonly qty: number;
  /** Units neither on a line nor set aside by a hold recorded on the batch. */
  readonly available: number;
  readonly eta: string | null;
  /**
   * Units set aside by the holds recorded on the batch and not yet given back: those of active
   * holds, and those of holds that have expired until a write gives them back (domain/holds.ts,
   * lazy expiry). A count, not a list, so that nothing read or written with the batch grows with
   * its holds; each hold's units are a record of their own (BatchRepository.heldOn). Absent: none.
   */
  readonly held?: number;
  /**
   * The store's bound on the holds counted on the batch's own item: none of the holds whose units
   * the item counts expires before it (earliestHeldExpiry; functions/store/held-bounds.ts, "Bounds of
   * held units"). `heldTakes` is the store's count of the writes that kept it, which a write raising
   * it names as read. Absent: the item's takes for holds have set none.
   */
  readonly heldFrom?: string;
  readonly heldTakes?: number;
  /**
   * Present while the store keeps part of the batch's `available` in pieces of their own, so that a
   * hot SKU's allocations do not all write one item (docs/capacity.md, "A hot SKU"): `available`
   * counts them, and the rules read only `available`. The rest, the batch's own units, is
   * `available` less the pieces'. A batch found for a take may count its pieces as last read
   * (BatchRepository.stockOf), more or fewer than they hold now.
   */
  readonly pieces?: readonly BatchPiece[];
  /** With `pieces`: the store's name for the spread they belong to, which a hold's units taken from them keep. */
  readonly spreadId?: string;
  /**
   * The id of the location the batch is at (a shipment's: where it will arrive). Absent: the
   * built-in `default` location, where every batch added without one is, those added before there
   * were locations among them (locationOf).
   */
  readonly location?: string;
}

/**
 * A share of a spread batch's available units, kept apart by the store; `piece` numbers it within its
 * batch, and `held` is its share of the batch's count of held units: the sum over the batch's items
 * is what counts, and one piece's share alone may be below zero (functions/store/held-units.ts).
 */
export interface BatchPiece {
  readonly piece: number;
  readonly available: number;
  readonly held: number;
  /** The piece's bound on its holds' expiry, and its count of the writes that kept it (Batch.heldFrom). */
  readonly heldFrom?: string;
  readonly heldTakes?: number;
}

/** The units of a spread batch that its pieces keep: 0 for a batch kept whole. */
export const piecesAvailable = (batch: Batch): number => (batch.pieces ?? []).reduce((sum, { available }) => sum + available, 0);

/** How far a line may be split over batches (domain/split-lines.ts): not at all, over batches at one location (one parcel), or over locations. */
export type Split = 'none' | 'batches' | 'locations';

/** Units of a line on one batch, at that batch's location. */
export interface LinePart {
  readonly batchref: string;
  readonly qty: number;
  readonly location: string;
}

/** Units of a line from one batch, as that batch was read for the line's take. */
export interface Part {
  readonly batch: Batch;
  readonly qty: number;
}

/** A line whose request allowed a split: how far, and its parts, one per batch, whose qtys sum to the line's. */
export interface SplitLine {
  readonly split: Exclude<Split, 'none'>;
  readonly parts: readonly LinePart[];
}

/** Units of a line that left the building from one batch (domain/shipments.ts), at that batch's location. */
export interface ShippedUnits {
  readonly batchref: string;
  readonly qty: number;
  readonly location: string;
}

/**
 * An order line placed into a batch. Its `qty` is the units it holds on its batches: those not yet
 * shipped. What it shipped is `shipped`, so the line was allocated `qty` plus those (orderedQtyOf).
 */
export interface Allocation extends OrderLine {
  /** Its batch; for a split line, its first part's (`split` names them all). */
  readonly batchref: string;
  /**
   * What its request named of where it may come from (recordedRouting): the locations a change of
   * its batch may move it to, and what a repeat of its request must name again. Absent: neither.
   */
  readonly routing?: Routing;
  /** Present on a line whose request allowed a split, in one part or several: every rule that gives or moves its units reads its parts. */
  readonly split?: SplitLine;
  /** The units it shipped, batch by batch, in the order they first shipped; absent: none. A split line's parts no longer count them. */
  readonly shipped?: readonly ShippedUnits[];
  /** True once a cancel gave back the units it had not shipped: it stays as what it shipped. */
  readonly cancelled?: true;
}

/** A line as a batch lists it: a whole line, or one part of a split line (`isPart`: `qty` is the part's, and its order holds the line). */
export interface ListedLine extends Allocation {
  readonly isPart?: true;
}

/** How far the line may be split: `none` for a whole line. */
export const splitOf = (line: Pick<Allocation, 'split'>): Split => line.split?.split ?? 'none';

/** The line's units on each batch: a whole line's one part is its batch, at `location` (the batch's, when the caller knows it). */
export const partsOf = (line: Allocation, location = DEFAULT_LOCATION_ID): readonly LinePart[] =>
  line.split?.parts ?? [{ batchref: line.batchref, qty: line.qty, location }];

/** An order's line and the location of its batch. */
export interface RoutedAllocation extends Allocation {
  readonly location: string;
}

export interface NewBatch {
  readonly ref: string;
  readonly sku: string;
  readonly qty: number;
  readonly eta: string | null;
  /** Absent: the `default` location. */
  readonly location?: string;
}

/** The location a batch is at: `default` when it names none. */
export const locationOf = (batch: Pick<Batch, 'location'>): string => batch.location ?? DEFAULT_LOCATION_ID;

/** A batch at `default` names no location, whether its request named `default` or none, as one added before there were locations. */
export const newBatch = ({ ref, sku, qty, eta, location }: NewBatch): Batch => ({
  ref,
  sku,
  qty,
  available: qty,
  eta,
  ...(location === undefined || location === DEFAULT_LOCATION_ID ? {} : { location }),
});

/** A line goes whole into one batch: a batch with too little left is skipped, never partly used. */
export const canAllocate = (batch: Batch, line: OrderLine): boolean =>
  batch.sku === line.sku && batch.available >= line.qty;

/**
 * In-stock batches before shipments, then the earliest shipment; the reference breaks ties so the
 * choice never depends on the order in which storage returns batches.
 */
export const byPreference = (a: Batch, b: Batch): number => {
  if (a.eta !== b.eta) {
    if (a.eta === null) return -1;
    if (b.eta === null) return 1;
    return a.eta < b.eta ? -1 : 1;
  }
  return a.ref < b.ref ? -1 : a.ref > b.ref ? 1 : 0;
};

/** An order of preference of batches, best first: byPreference, or a request's routed one (domain/routing.ts). */
export type BatchPreference = (a: Batch, b: Batch) => number;

/**
 * Whether a choice passes over a spread batch: one the rule (`preference`) prefers to the batch it
 * picked (any, when it picked none). Its pieces may count fewer units than it has unless read
 * settled (BatchRepository.stockOf), so such a choice is made again on a settled read.
 */
export const passesOverSpread = (batches: readonly Batch[], picked?: Batch, preference: BatchPreference = byPreference): boolean =>
  batches.some((batch) => batch.pieces !== undefined && (picked === undefined || preference(batch, picked) < 0));

/** The line the request asks for: its shipped units count, since they were allocated to it. */
export const isSameLine = (allocation: Allocation, line: OrderLine): boolean =>
  allocation.orderid === line.orderid && allocation.sku === line.sku && orderedQtyOf(allocation) === line.qty;

/** The units the line was allocated: those it still holds on its batches and those it shipped. */
export const orderedQtyOf = (line: Pick<Allocation, 'qty' | 'shipped'>): number => line.qty + (line.shipped ?? []).reduce((sum, { qty }) => sum + qty, 0);

/** The units the holds recorded on the batch set aside (Batch.held): 0 when none. */
export const heldOf = (batch: Batch): number => batch.held ?? 0;

/**
 * Units on lines: `qty` = `available` + allocated + the units of the holds recorded on the batch.
 * Above `qty` only while a change that lowered `qty` still has lines to move off the batch: then
 * `available` is below zero, and no allocation reads the batch until it is back.
 */
export const allocatedOf = (batch: Batch): number => batch.qty - batch.available - heldOf(batch);

/**
 * The batch has units that no line holds: available ones, or ones held, and no unfinished change of
 * its qty still owes any. Allocations read only such batches, so a batch every unit of which is held
 * stays where they look, ready for the moment its holds expire.
 */
export const hasStockLeft = (batch: Batch): boolean => batch.available >= 0 && batch.available + heldOf(batch) > 0;

/** What a client may change of a batch: its quantity, its arrival date, or both. */
export interface BatchChange {
  readonly qty?: number;
  readonly eta?: string | null;
}

/** The batch as the change leaves it: the lines it holds stay, so `available` moves with `qty`. */
export const changedBatch = (batch: Batch, { qty = batch.qty, eta = batch.eta }: BatchChange): Batch => ({
  ...batch,
  qty,
  eta,
  available: batch.available + (qty - batch.qty),
});

export const isSameBatch = (a: Batch, b: Batch): boolean =>
  a.ref === b.ref && a.sku === b.sku && a.qty === b.qty && a.available === b.available && a.eta === b.eta && heldOf(a) === heldOf(b);

/** A line taken off a batch whose quantity fell below what it held: where it went, or null when no batch could take it whole and it left its order. */
export interface Reallocation extends OrderLine {
  readonly from: string;
  readonly batchref: string | null;
}

/** Lines come off a batch that shrank most recently allocated first: the newest promises are the ones broken. */
export const linesToTakeOff = <Line extends Allocation>(batch: Batch, linesNewestFirst: readonly Line[]): Line[] => {
  const taken: Line[] = [];
  let deficit = -batch.available;
  for (const line of linesNewestFirst) {
    if (deficit <= 0) break;
    taken.push(line);
    deficit -= line.qty;
  }
  return taken;
};

/** A line taken off a batch that shrank, and the batch it goes to: null when none could take it whole, and it leaves its order. */
export interface LineMove {
  readonly line: Allocation;
  readonly to: string | null;
}

/** The batches as the moves, once written, leave them: `from` given back every line's qty, each other batch short of the lines it took. */
export const afterMoves = (from: Batch, batches: readonly Batch[], moves: readonly LineMove[]): { from: Batch; batches: Batch[] } => {
  const taken = (ref: string) => moves.reduce((sum, { line, to }) => (to === ref ? sum + line.qty : sum), 0);
  return {
    from: { ...from, available: from.available + moves.reduce((sum, { line }) => sum + line.qty, 0) },
    batches: batches.map((batch) => {
      const qty = taken(batch.ref);
      return qty === 0 ? batch : { ...batch, available: batch.available - qty };
    }),
  };
};

/** Stock levels of a SKU, in all or at one location. */
export interface StockTotals {
  /** Units available in batches on the shelf (eta null). */
  readonly inStock: number;
  /** Units available in shipments. */
  readonly incoming: number;
  /** Units set aside by active holds. */
  readonly held: number;
  /** The earliest arrival among shipments with stock. */
  readonly nextEta: string | null;
  /** Units on the shelf (batches with eta null): available, held, and those lines hold that have not shipped. */
  readonly onHand: number;
  /** Units on the shelf that lines hold and that have not shipped: `onHand` = `inStock` + `committed` + those held on the shelf. */
  readonly committed: number;
}

/** A SKU's stock levels at one location. */
export interface LocationStock extends StockTotals {
  readonly location: string;
}

export interface StockLevels extends StockTotals {
  readonly sku: string;
  /** The batches with units available or held, in the order allocation prefers them. */
  readonly batches: readonly Batch[];
  /** The levels at each location of those batches, most preferred location first (byPriority). */
  readonly locations: readonly LocationStock[];
}

/**
 * The totals of batches with stock (available, or held), sorted by preference, and of the batches on
 * the shelf that lines hold units of (`onShelf`: those with stock among them, and those every unit of
 * which lines hold).
 */
const totalsOf = (batches: readonly Batch[], onShelf: readonly Batch[]): StockTotals => {
  const shipments = batches.filter((batch) => batch.eta !== null);
  const sum = (some: readonly Batch[]) => some.reduce((total, batch) => total + batch.available, 0);
  return {
    inStock: sum(batches.filter((batch) => batch.eta === null)),
    incoming: sum(shipments),
    held: batches.reduce((total, batch) => total + heldOf(batch), 0),
    nextEta: shipments[0]?.eta ?? null,
    onHand: onShelf.reduce((total, batch) => total + batch.qty, 0),
    // A batch that a lowered qty left owing its lines more than it has counts what it has.
    committed: onShelf.reduce((total, batch) => total + Math.max(0, Math.min(batch.qty, allocatedOf(batch))), 0),
  };
};

/**
 * The SKU's stock levels from its batches with stock left, as found at one moment (services.ts,
 * asFoundNow: the units of holds expired and not yet given back count as available), and its batches
 * out of the stock range whose units its lines hold (`exhausted`): in all, and at each location that
 * has one of the batches with units available or held, or units on the shelf, ordered as `stored`
 * (every location stored) orders them, by priority then id; a location it does not know after
 * those, by id. `at`, a location's id, limits them to the batches at that one: the totals are then
 * its own, and its entry is there even with no batch, at zeros.
 */
export const stockLevels = (
  sku: string,
  batchesWithStock: readonly Batch[],
  stored: readonly Location[] = [],
  at?: string,
  exhausted: readonly Batch[] = [],
): StockLevels => {
  const here = (batch: Batch) => at === undefined || locationOf(batch) === at;
  const batches = batchesWithStock.filter((batch) => (batch.available > 0 || heldOf(batch) > 0) && here(batch)).sort(byPreference);
  const onShelf = [...batchesWithStock, ...exhausted].filter((batch) => batch.eta === null && batch.qty > 0 && here(batch));
  const order = allLocationsOf(stored).map(({ id }) => id);
  const rank = (id: string) => (order.includes(id) ? order.indexOf(id) : order.length);
  const ids = at === undefined ? [...new Set([...batches, ...onShelf].map(locationOf))].sort((a, b) => rank(a) - rank(b) || (a < b ? -1 : a > b ? 1 : 0)) : [at];
  const atLocation = (some: readonly Batch[], location: string) => some.filter((batch) => locationOf(batch) === location);
  return {
    sku,
    ...totalsOf(batches, onShelf),
    batches,
    locations: ids.map((location) => ({ location, ...totalsOf(atLocation(batches, location), atLocation(onShelf, location)) })),
  };
};

/** An order of several lines, allocated all or nothing; each SKU appears once. */
export interface Order {
  readonly orderid: string;
  /** Each line with how far it may be split (domain/split-lines.ts): the order's `split` when absent. */
  readonly lines: readonly { readonly sku: string; readonly qty: number; readonly split?: Split }[];
  /** How far each line that names no `split` of its own may be split: `none` when absent. */
  readonly split?: Split;
}

/** A line of an order or a hold that cannot be placed: its SKU was never added, or as OutOfStock says (RefusalReason). */
export type LineRefusal = { readonly sku: string; readonly reason: 'unknown_sku' | 'out_of_stock' | 'no_location' };

/** A new line and the batch it goes to, as that batch was read; a split line's parts, each on its batch. */
export interface Placement {
  readonly allocation: Allocation;
  /** A split line's first part's batch. */
  readonly batch: Batch;
  /** Present for a line its request allowed to split (`allocation.split` names the same parts): each part's batch as read, and its units. */
  readonly parts?: readonly Part[];
}

/** Where a placement takes its units from: its parts, or its whole line from its batch. */
export const takesOf = ({ allocation, batch, parts }: Placement): readonly Part[] => parts ?? [{ batch, qty: allocation.qty }];

export type OrderPlan =
  | { readonly kind: 'refused'; readonly refusals: LineRefusal[] }
  | { readonly kind: 'placed'; readonly placements: Placement[] };
