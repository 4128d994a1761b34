import { DEFAULT_LOCATION_ID } from '../../domain/locations';
import type { Allocation, RoutedAllocation } from '../../domain/model';
import { type StoredAdjustmentItem, parseAdjustmentItem } from './adjustments';
import { type StoredBatchItem, parseBatchItem } from './batches';
import { PK, SK } from './fields';
import { type StoredHeldUnitsItem, parseHeldUnitsItem } from './held-units';
import { type StoredHoldItem, parseHoldItem } from './holds';
import { type StoredImportItem, parseImportItem } from './imports';
import { type StoredLineItem, parseLineItem } from './lines';
import { type StoredLocationItem, parseLocationItem } from './locations';
import { type StoredPieceItem, parsePieceItem } from './pieces';
import { type StoredShipmentItem, parseShipmentItem } from './shipments';
import { type StoredStockChangeItem, parseStockChangeItem } from './stock-changes';
import { type StoredTransferItem, parseTransferItem } from './transfers';

/*
 * The table's items, as the DynamoDB adapter lays them out: what each kind of item looks like is
 * its own module's (batches.ts, pieces.ts, lines.ts, holds.ts, held-units.ts, locations.ts: keys, items,
 * parser and writes); this one says how they sit together in the table, and reads any item back through its
 * kind's parser, for the repository (batch-repository.ts) and for the stream consumer and the tools
 * that read items without the repository, so that those carry no DynamoDB client.
 *
 * The table's items (one table, keys `pk`/`sk` as tableKeySchema names them; batches.ts: known SKU,
 * batches and their references; pieces.ts: pieces; held-units.ts: held units; holds.ts: holds;
 * lines.ts: lines and their notices; locations.ts: locations):
 *   known SKU        pk SKU#<sku>       sk STOCK         sku, listedIn SKUS#<shard>  (written with each batch of the SKU)
 *   SKU at a location pk SKU#<sku>      sk PLACE#<location>  sku, location, listedIn PLACE#<location>#<shard>
 *                                                         (written with each batch of the SKU at the location: sku-lists.ts)
 *   batch with stock pk SKU#<sku>       sk STOCK#<ref>   ref, sku, qty, available, eta, heldUnits, location
 *   exhausted batch  pk SKU#<sku>       sk EMPTY#<ref>   ref, sku, qty, available, eta, location
 *   spread batch     pk SKU#<sku>       sk STOCK#<ref>   as a batch with stock, and pieces, spreadId, spreadAt
 *   piece of a batch pk PIECES#<k>#<sku> sk PIECE#<ref>#<n>  ref, sku, piece n, available, heldUnits, givenBack, spreadId, takenAt
 *                                                         (k = n mod PIECE_PARTITIONS)
 *   held units       pk SKU#<sku>, or the partition of the piece they came from
 *                                       sk HELD#<len>:<ref>#<heldUntil>#<digest of holdid>#<source>
 *                                                         holdid, ref, sku, qty, sourceQty, heldUntil, piece, spreadId, sources
 *   batch reference  pk BATCHREF#<ref>  sk BATCHREF      ref, sku, qty, eta, location, changedAt, changeReason, countedAt,
 *                                                         addedBy (the import row that added it)
 *                                                         (makes a ref unique across SKUs)
 *   allocated line   pk ORDER#<orderid> sk LINE#<sku>    orderid, sku, qty, batchref, location, routing,
 *                                                         lineBatch LINES<shard>#<batchref>, allocatedAt, movedAt,
 *                                                         shipped [{batchref, qty, location}], cancelledAt
 *                                                         (qty: the units not yet shipped; none: no lineBatch)
 *   split line       pk ORDER#<orderid> sk LINE#<sku>    orderid, sku, qty, split, parts [{batchref, qty, location}],
 *                                                         routing, allocatedAt, movedAt, shipped, cancelledAt
 *                                                         (in no index: its parts are; a part shipped whole leaves parts)
 *   part of a line   pk ORDER#<orderid> sk PART#<len>:<sku>#<batchref> (PART#H:<digest> past 1,024 bytes)
 *                                                         orderid, sku, qty, batchref, location,
 *                                                         lineBatch LINES<shard>#<batchref>, allocatedAt (the line's)
 *   deallocation     pk ORDER#<orderid> sk DEALLOCATED#<sku>#<noticeId>
 *                                                         orderid, sku, qty, batchref, location, reason, deallocatedAt,
 *                                                         split, parts (a split line's)
 *   out of stock     pk ORDER#<orderid> sk OUTOFSTOCK#<sku>#<noticeId>
 *                                                         orderid, sku, qty, destination, location, refusedAt
 *   hold             pk HOLD#<holdid>   sk HOLD         holdid, lines [{sku, qty, batchref, location, sources}], routing, status,
 *                                                         heldUntil, placedAt, extendedAt, endedAt, expiresAt
 *   location         pk LOCATIONS       sk <id>          id, name, priority, serves, active, position,
 *                                                         revision, changedAt (none for `default` until replaced)
 *   transfer         pk TRANSFER#<transferid> sk TRANSFER  transferid, sku, qty, fromLocation, toLocation, eta,
 *                                                         fromBatchref, status, createdAt, cancelledAt, expiresAt
 *   shipment         pk SHIPMENT#<shipmentid> sk SHIPMENT  shipmentid, orderid, location, shippedAt,
 *                                                         lines [{sku, qty, parts [{batchref, qty}]}]
 *   stock change     pk BATCHREF#<ref>  sk CHANGE#<at>#<reason>#<id>  ref, sku, location, delta, reason, reference, at, expiresAt
 *                                                         (each change of the batch's qty, kept 31 days: stock-changes.ts)
 *   adjustment       pk ADJUSTMENT#<adjustmentid> sk ADJUSTMENT  adjustmentid, ref, reason, qty or delta, countedAt,
 *                                                         expectedQty, note, before, after, adjustedAt
 *   import           pk IMPORT#<importid> sk IMPORT    importid, dryRun, validateFirst, digest, status, total, done,
 *                                                         applied, unchanged, conflicted, stale, invalid, failed, startedAt, finishedAt
 *   chunk of an import pk IMPORT#<importid> sk CHUNK#<index> importid, outcomes (imports.ts)
 *   errors of a chunk pk IMPORT#<importid> sk ERRORS#<index> importid, errors [{row, outcome, code, message}]
 *   plan of a count at a place pk IMPORT#<importid> sk PLACECOUNT#<row> importid, counts [{ref, qty}]
 * A batch's `location` is absent at `default` (every batch of a table written before there were
 * locations among them), so that no item needs a migration; a batch at any other location carries
 * its id, on its item and on its reference (for BatchAdded), and its location's item was checked to
 * exist in the transaction that added it (locations.ts).
 * A line's and a hold's `routing` (what its request named of where its lines may come from) is
 * absent when the request named neither, on those written before they recorded it among them
 * (routing-fields.ts); a hold's lines name their batches' `location`, but on holds placed before.
 * A hold's units on a batch are an item of their own ("held units"), one for each item they were
 * taken from (the batch's own units, or a piece), beside that item, sorted by expiry under the batch;
 * the item they came from counts them (`heldUnits`), and its `available` counts neither those units
 * nor its lines'. So placing a hold writes its record, its units' records and the items it takes
 * from, and no write of a hold reads or changes another hold: nothing grows with the holds on a
 * batch (docs/architecture.md, "Holds"; holds.ts, held-units.ts). A batch is in the stock range
 * while it has units no line holds (available or held: hasStockLeft), so that a batch whose every
 * unit is held is still read by allocations, which give back the units of expired holds when they
 * need them (lazy expiry, domain/holds.ts). Giving a hold's units back is deleting their record, on
 * condition that it exists: only one write can do it.
 * A hold's record says what it holds and until when (`heldUntil`: `expiresAt` is the table's time
 * to live, which deletes an ended hold's record two days after it ended). Its status is the one last
 * written; whether an active hold has expired is a matter of `heldUntil` and the time (statusAt).
 * A batch's `available` is below zero only while a change that lowered its qty still has lines to
 * move off it: it then sits out of the stock range, where no allocation reads it, until the lines
 * are moved (domain/batch-changes.ts, changeBatch). Its lines are found through the sparse index
 * linesByBatch (functions/store/table.ts; lines.ts) on `lineBatch`, newest `allocatedAt` first: an
 * index, not a copy of each line under the batch, because that copy would be one more item in every
 * allocation's transaction (2 WCU), where the index costs 1 WCU and the allocation keeps 2 items.
 * `eta` is absent for a batch in stock (a condition cannot compare with NULL everywhere; absence it can).
 *
 * A hot SKU's batch may be spread (docs/capacity.md, "A hot SKU"; pieces.ts): part of its
 * `available` moved into `pieces` pieces, each an item of its own in one of PIECE_PARTITIONS
 * partitions past the SKU's own, so that allocations take from different items (no
 * TransactionConflict between them) and different partitions (past one partition's write ceiling).
 * Then the batch's available units are its item's `available` and its pieces', and `qty` = that +
 * its lines' + its holds'. The batch item names its spread (`spreadId`) and the number of its
 * pieces, which are written and removed with it in one transaction, so a read of the item and then
 * of the pieces tells a whole spread from one that a write came between. A spread batch stays in
 * the stock range until it is gathered (its pieces' units given back to its item), however few
 * units are left, so that allocations read it.
 *
 * Events (functions/events/stream-events.ts) come from the table's stream, so only what committed
 * is announced. An item's own fields must say what happened, hence three choices here:
 * - the batch reference holds the batch's qty and eta, and a change of the batch updates it in the
 *   same transaction: the batch item itself moves between keys whenever its stock crosses zero,
 *   which a stream shows as a removal and an insertion that look the same for an allocation and a
 *   change; the reference's own insertion and modification are BatchAdded and BatchChanged;
 * - a removed line's record cannot tell a cancellation from a change of its batch, so each removal
 *   writes a deallocation notice with its reason in the same transaction;
 * - a refusal for lack of stock changes nothing, so it writes an out-of-stock notice.
 * A line, a deallocation notice and each line of a hold's record name the location of their batch
 * (absent at `default`, as on a batch's items), and an out-of-stock notice the `destination` and
 * `location` its request named: a stream record of them says nothing of the batch or the request.
 * A hold's record needs no notice: its insertion is its placing, and each modification of an active
 * record says by its new status or `heldUntil` what it was; each write records its own time with it
 * (`placedAt`, `extendedAt`, `endedAt`).
 * Notices sit in the order's partition, next to its lines (a stream orders the records of one
 * partition key's items), and carry `expiresAt`: DynamoDB's time to live deletes them after a day,
 * long after the stream (24 h retention) has carried them.
 *
 * Allocating reads one key range of the SKU's partition, `STOCK` and `STOCK#...`: the known-SKU item
 * and the batches that still have stock. The allocation that takes a batch's last unit moves it to
 * `EMPTY#<ref>` in the same transaction, so a SKU's exhausted batches, years of them, are never read
 * again by an allocation, and its cost stays flat (docs/capacity.md). The known-SKU item tells
 * "Invalid sku" from "Out of stock" when every batch is exhausted, in the same read. The domain sorts
 * the batches by preference, so the sort key need not encode it. An order's lines share a partition,
 * ready for reading an order's allocations. `type` names each item's kind for whoever reads the
 * table without this code (the console, a Scan, a stream record).
 */

/**
 * An item of the table as this adapter and the tools that read the whole table see it. Each kind's
 * module names its own items' shape, so that none of them imports this module, which imports them all.
 */
export type StoredItem =
  | StoredBatchItem
  | StoredPieceItem
  | StoredHeldUnitsItem
  | StoredLineItem
  | StoredHoldItem
  | StoredLocationItem
  | StoredTransferItem
  | StoredShipmentItem
  | StoredAdjustmentItem
  | StoredStockChangeItem
  | StoredImportItem
  /** Its key is not the one the adapter would write for its attributes, or an attribute is missing. */
  | { readonly kind: 'unrecognized'; readonly pk: string; readonly sk: string };

/**
 * Each kind's parser, which reads an item back through the same key functions that wrote it, so the
 * key layout stays known to that kind's module alone: an item is a batch only if its key is one of
 * the two keys of a batch of its sku and ref. No two kinds' keys meet, so at most one parser knows an
 * item, whatever their order.
 */
const parsers = [parseBatchItem, parsePieceItem, parseHeldUnitsItem, parseHoldItem, parseLineItem, parseLocationItem, parseTransferItem, parseShipmentItem, parseAdjustmentItem, parseStockChangeItem, parseImportItem];

export const parseStoredItem = (item: Record<string, unknown>): StoredItem => {
  for (const parse of parsers) {
    const stored = parse(item);
    if (stored) return stored;
  }
  return { kind: 'unrecognized', pk: String(item[PK]), sk: String(item[SK]) };
};

/** The line stored at a line's key, with the routing it records. */
const lineOf = (item: Record<string, unknown>) => {
  const stored = parseStoredItem(item);
  if (stored.kind !== 'line') throw new Error(`Item at the key of a line is not a line: ${JSON.stringify(stored)}`);
  return stored;
};

export const storedLine = (item: Record<string, unknown>): Allocation => {
  const { allocation, routing } = lineOf(item);
  return { ...allocation, ...(routing ? { routing } : {}) };
};

/** A line read back, with the location it records of its batch (none recorded: `default`). */
export const locatedLine = (item: Record<string, unknown>): RoutedAllocation => {
  const { allocation, routing, location } = lineOf(item);
  return { ...allocation, ...(routing ? { routing } : {}), location: location ?? DEFAULT_LOCATION_ID };
};

