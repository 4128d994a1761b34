import type { HeldLine, Hold } from './holds';
import type { Location } from './locations';
import type { Allocation, Batch, NewBatch } from './model';
import type { Shipment } from './shipments';
import type { Transfer } from './transfers';

/*
 * What the repository port (./ports.ts) is handed and answers, besides the domain's own types: the
 * outcomes of its conditional writes, the cursors it pages with, and what a read of stock says.
 */

/** How stale the locations that route a request may be: a change of a location routes every request within this (docs/architecture.md, "Locations"). */
export const ROUTING_LOCATIONS_MAX_AGE_MS = 30_000;

/** A write made on condition that what it read has not changed since; `changed` means nothing was written. */
export type ConditionalWrite = 'saved' | 'changed';

/** The give-backs of expired holds on a batch counted so far, for the next to go on from: the holds, and their records. */
export interface CountedGiveBacks {
  readonly holds: readonly string[];
  readonly records: number;
}

/**
 * What a give-back of expired holds' units on a batch would free now (BatchRepository.expiredUnitsOn):
 * its units; `allRead` when its reads found every record expired by now, and then `boundLeft`, the
 * bound it would raise the batch's to (none: it would leave no record); and `counted`, these
 * give-backs and those before it.
 */
export interface ExpiredUnits {
  readonly units: number;
  readonly allRead?: true;
  readonly boundLeft?: string;
  readonly counted: CountedGiveBacks;
}

export type AddBatchResult =
  | { readonly outcome: 'added' }
  /** A batch with this reference exists, whatever its SKU: this one, as it is now. Nothing was written. */
  | { readonly outcome: 'exists'; readonly existing: NewBatch }
  /** The batch names a location that is not stored (nor the built-in `default`). Nothing was written. */
  | { readonly outcome: 'unknown-location' };

/**
 * The store's mark of one write of a location: a replacement made on condition that the location is
 * still as read names it. Branded, so that nothing but a read's revision is taken for one.
 */
export type LocationRevision = { readonly [locationRevision]: true };
declare const locationRevision: unique symbol;

/** A location as stored, and the revision of the write that stored it. */
export interface StoredLocation {
  readonly location: Location;
  readonly revision: LocationRevision;
}

/** A hold's line, or a split line's part, and the batch it takes from, as that batch was found when the hold was planned. */
export interface HoldPlacement {
  readonly line: HeldLine;
  readonly batch: Batch;
}

export type SaveHoldResult =
  | { readonly outcome: 'saved' }
  /** A batch is no longer as it was found: another request took stock or placed a hold first. Nothing was written. */
  | { readonly outcome: 'batch-changed' }
  /** A batch is no longer stored as it was read, and may still take its line (SaveAllocationResult). Nothing was written. */
  | { readonly outcome: 'read-again' }
  /** A hold with this holdid exists (as stored): a holdid is used once. Nothing was written. */
  | { readonly outcome: 'hold-exists'; readonly existing: Hold }
  /** Its lines, or their confirm, need `writes` in one transaction, more than the `maxWrites` it holds, with every batch whole. Nothing was written. */
  | { readonly outcome: 'too-many-writes'; readonly writes: number; readonly maxWrites: number };

export type ConfirmHoldResult =
  | { readonly outcome: 'saved' }
  /** The hold, or one of its batches, is no longer as read. Nothing was written. */
  | { readonly outcome: 'changed' }
  /** The order already has lines for some of the hold's SKUs (these, as stored). Nothing was written. */
  | { readonly outcome: 'lines-exist'; readonly existing: Allocation[] };

/**
 * Where a listing of expired holds goes on from: the store's own position, handed back as it came.
 * Branded, so that nothing but a page's `next` is taken for one.
 */
export type ExpiredHoldsCursor = { readonly [expiredHoldsCursor]: true };
declare const expiredHoldsCursor: unique symbol;

/** A page of the holds still active whose expiry has passed. */
export interface ExpiredHolds {
  /** Earliest expiry first. */
  readonly holdids: string[];
  /** Where the next page starts; absent on the last page. */
  readonly next?: ExpiredHoldsCursor;
}

/** How an active hold ends without becoming an order's lines. */
export type HoldEnding = 'released' | 'expired';

/**
 * A hold that a change of its batch's qty ends in the change's own write: the hold as read, how it
 * ends, and its other batches that still record it (a request may have given an expired hold's
 * units back on some of them already), where its units go back.
 */
export interface HoldToEnd {
  readonly hold: Hold;
  readonly ending: HoldEnding;
  readonly givenBackOn: readonly string[];
}

export type BatchChangeWrite =
  | { readonly outcome: ConditionalWrite }
  /** The change and its holds' ends pass one write: only the last `fitting` of them fit with it. Nothing was written. */
  | { readonly outcome: 'too-many-holds'; readonly fitting: number };

export type SaveAllocationResult =
  | { readonly outcome: 'saved' }
  /** The batch can no longer take the line: another request took its stock first. Nothing was written. */
  | { readonly outcome: 'batch-changed' }
  /**
   * The batch is no longer stored as it was read (spread over pieces or gathered meanwhile, or its
   * pieces hold less than remembered), and may still take the line: read it again. Nothing was written.
   */
  | { readonly outcome: 'read-again' }
  /** The (orderid, sku) line is already allocated. Nothing was written. */
  | { readonly outcome: 'line-exists'; readonly existing: Allocation };

export type MoveAllocationsResult =
  /** The first `moved` of the moves were written; the others wait for another write. */
  | { readonly outcome: 'saved'; readonly moved: number }
  /** A line or a batch is no longer as read. Nothing was written. */
  | { readonly outcome: 'changed' };

export type SaveAllocationsResult =
  | { readonly outcome: 'saved' }
  /** A batch can no longer take its line: another request took its stock first. Nothing was written. */
  | { readonly outcome: 'batch-changed' }
  /** A batch is no longer stored as it was read, and may still take its line (SaveAllocationResult). Nothing was written. */
  | { readonly outcome: 'read-again' }
  /** Some of the lines are already allocated (these, as stored). Nothing was written. */
  | { readonly outcome: 'lines-exist'; readonly existing: Allocation[] }
  /** The lines need `writes` in their one transaction, more than the `maxWrites` it holds, with every batch whole. Nothing was written. */
  | { readonly outcome: 'too-many-writes'; readonly writes: number; readonly maxWrites: number };

export type SaveTransferResult =
  | { readonly outcome: 'saved' }
  /** The source batch can no longer give the qty: another request took its stock first. Nothing was written. */
  | { readonly outcome: 'batch-changed' }
  /** The source batch is no longer stored as read (gathered from its pieces meanwhile, or by this write's request), and may still give the qty. Nothing was written. */
  | { readonly outcome: 'read-again' }
  /** A transfer with this transferid exists (as stored): a transferid is used once. Nothing was written. */
  | { readonly outcome: 'transfer-exists'; readonly existing: Transfer }
  /** A batch already has the transferid as its ref, whatever its SKU: the incoming batch cannot have it. Nothing was written. */
  | { readonly outcome: 'batch-exists' };

export type SaveShipmentResult =
  /** Written at `shippedAt`: the shipment's, or a later moment when it was written again on its batches' qty as another change left them. */
  | { readonly outcome: 'saved'; readonly shippedAt: string }
  /** A line or a batch is no longer as read: another request shipped, moved or cancelled first. Nothing was written. */
  | { readonly outcome: 'changed' }
  /** A shipment with this shipmentid exists (as stored): a shipmentid is used once. Nothing was written. */
  | { readonly outcome: 'shipment-exists'; readonly existing: Shipment }
  /** The shipment needs `writes` in its one transaction, more than the `maxWrites` it holds. Nothing was written. */
  | { readonly outcome: 'too-many-writes'; readonly writes: number; readonly maxWrites: number };

/**
 * How a SKU's stock is read (BatchRepository.stockOf): as remembered for a take, plainly, or settled.
 * `writesNothing`: a spread batch that has cooled, or has nothing left in its pieces, is answered as
 * read rather than gathered back first (a promise's read).
 */
export interface StockRead {
  readonly forTake?: boolean;
  readonly settled?: boolean;
  readonly writesNothing?: boolean;
}

/** What allocating a line of one SKU reads. */
export interface SkuStock {
  /** False when no batch of the SKU was ever added ("Invalid sku"); true even when all are exhausted. */
  readonly known: boolean;
  /**
   * The SKU's batches that have stock left, in no particular order. Exhausted batches are not read,
   * so what an allocation reads does not grow with the SKU's history.
   */
  readonly batches: Batch[];
}
