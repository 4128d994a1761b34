import { ScanCommand, type ScanCommandOutput } from '@aws-sdk/lib-dynamodb';
import { type Hold } from '../domain/holds';
import { DEFAULT_LOCATION_ID, type Location } from '../domain/locations';
import { type Allocation, type Batch, hasStockLeft, heldOf } from '../domain/model';
import type { Shipment } from '../domain/shipments';
import type { RecordedStockChange } from '../functions/store/stock-changes';
import type { Transfer } from '../domain/transfers';
import { type Spread } from '../functions/store/batches';
import { heldBoundFields } from '../functions/store/held-bounds';
import type { StoredHeldUnits } from '../functions/store/held-units';
import { parseStoredItem } from '../functions/store/items';
import { LINE_BATCH, linesOfBatch } from '../functions/store/lines';
import type { StoredPiece } from '../functions/store/pieces';
import type { DocumentSender } from '../functions/store/store-calls';

/*
 * What the table holds, read whole for the invariants' check (./invariants.ts): its batches with their
 * pieces, lines and their parts, holds and their units, locations, transfers, shipments and changes.
 */

export interface Inventory {
  /** Spread ones with their pieces' units and held units counted in. */
  readonly batches: readonly Batch[];
  /** The records of holds' units, one per item they came from. */
  readonly heldUnits: readonly StoredHeldUnits[];
  /** Batches stored among those with stock without any, or the other way round. */
  readonly batchesOutOfPlace: readonly Batch[];
  /** The SKUs whose known-SKU item exists. */
  readonly knownSkus: readonly string[];
  /** The SKUs each location's list names: a SKU's item at the location exists. */
  readonly listedAt: readonly { readonly sku: string; readonly location: string }[];
  readonly references: readonly { readonly ref: string; readonly sku: string }[];
  readonly lines: readonly Allocation[];
  /** As last written: an active one may have expired since, its units free for the next line. */
  readonly holds: readonly Hold[];
  readonly unrecognized: readonly { readonly pk: string; readonly sk: string }[];
  /** Pieces of no spread batch, or of another spread than their batch's, or too few or too many for it. */
  readonly strayPieces: readonly string[];
  /** Lines whose entry in the linesByBatch index is in a partition that a change of their batch does not read. */
  readonly linesListedUnread: readonly Allocation[];
  /** A split line's parts without their item, or not as their line names them, or listed where a change of their batch does not read; and part items of no line's part. */
  readonly partsAstray: readonly string[];
  /** The ids of the locations stored: the built-in `default` only once replaced. */
  readonly locations: readonly string[];
  /** The same locations, as stored, for a reader that routes by them. */
  readonly storedLocations: readonly Location[];
  /** As last written, cancelled ones among them until their records expire. */
  readonly transfers: readonly Transfer[];
  readonly shipments: readonly Shipment[];
  /** Each change of a batch's qty, as the batch keeps it for the counts (kept for a while, then expired). */
  readonly stockChanges: readonly RecordedStockChange[];
}


/** Pages of 1,000 items keep each Scan call well inside the client's request timeout. */
const SCAN_PAGE_ITEMS = 1_000;

/**
 * Every item of the table, with strongly consistent reads so that no committed write is missed.
 * A Scan is not a snapshot: read a table at rest, or a transaction committed mid-scan can show half.
 */
export const readInventory = async (client: DocumentSender, tableName: string): Promise<Inventory> => {
  const found: { batch: Batch; inStockRange: boolean; spread?: Spread }[] = [];
  const pieces: StoredPiece[] = [];
  const knownSkus: string[] = [];
  const listedAt: { sku: string; location: string }[] = [];
  const references: { ref: string; sku: string }[] = [];
  const lines: Allocation[] = [];
  const holds: Hold[] = [];
  const heldUnits: StoredHeldUnits[] = [];
  const unrecognized: { pk: string; sk: string }[] = [];
  const linesListedUnread: Allocation[] = [];
  const partItems: PartItem[] = [];
  const allocatedAtOf = new Map<string, string>();
  const storedLocations: Location[] = [];
  const transfers: Transfer[] = [];
  const shipments: Shipment[] = [];
  const stockChanges: RecordedStockChange[] = [];
  let startKey: ScanCommandOutput['LastEvaluatedKey'];
  do {
    const page: ScanCommandOutput = await client.send(
      new ScanCommand({ TableName: tableName, ConsistentRead: true, Limit: SCAN_PAGE_ITEMS, ExclusiveStartKey: startKey }),
    );
    for (const item of page.Items ?? []) {
      const stored = parseStoredItem(item);
      if (stored.kind === 'batch') found.push(stored);
      else if (stored.kind === 'piece') pieces.push(stored.piece);
      else if (stored.kind === 'known-sku') knownSkus.push(stored.sku);
      else if (stored.kind === 'sku-at-location') listedAt.push({ sku: stored.sku, location: stored.location });
      else if (stored.kind === 'batch-reference') references.push({ ref: stored.ref, sku: stored.sku });
      else if (stored.kind === 'line') {
        lines.push(stored.allocation);
        allocatedAtOf.set(JSON.stringify([stored.allocation.orderid, stored.allocation.sku]), stored.allocatedAt);
        // A split line is listed by its parts' items, each under its batch; a line that holds no unit, under none.
        const listed = linesOfBatch(stored.allocation.batchref).includes(String(item[LINE_BATCH]));
        if (!stored.allocation.split && listed !== stored.allocation.qty > 0) linesListedUnread.push(stored.allocation);
      } else if (stored.kind === 'line-part') {
        const listed = linesOfBatch(stored.allocation.batchref).includes(String(item[LINE_BATCH]));
        partItems.push({ ...stored.allocation, listed, allocatedAt: stored.allocatedAt, location: stored.location ?? DEFAULT_LOCATION_ID });
      }
      else if (stored.kind === 'hold') holds.push(stored.hold);
      else if (stored.kind === 'held-units') heldUnits.push(stored.held);
      else if (stored.kind === 'location') storedLocations.push(stored.location);
      else if (stored.kind === 'transfer') transfers.push(stored.transfer);
      else if (stored.kind === 'shipment') shipments.push(stored.shipment);
      else if (stored.kind === 'stock-change') stockChanges.push(stored.change);
      else if (stored.kind === 'unrecognized') unrecognized.push({ pk: stored.pk, sk: stored.sk });
      // Notices (a deallocation's reason, a refusal) hold no stock: no invariant is about them.
    }
    startKey = page.LastEvaluatedKey;
  } while (startKey);
  return {
    ...withTheirPieces(found, pieces),
    heldUnits,
    knownSkus,
    listedAt,
    references,
    lines,
    holds,
    unrecognized,
    linesListedUnread,
    partsAstray: partsAstray(lines, partItems, allocatedAtOf),
    locations: storedLocations.map(({ id }) => id),
    storedLocations,
    transfers,
    shipments,
    stockChanges,
  };
};

/** A split line's part item as read: its own qty and batch, where it is listed, and what it says of its line. */
type PartItem = Allocation & { readonly listed: boolean; readonly allocatedAt: string; readonly location: string };

/**
 * Each part a split line names has its item, of its qty and at its location, listed where a change of
 * its batch reads (a change finds the line there to move the part) at its line's allocation time (by
 * which a change takes the newest lines off first), and each part item is one a line names.
 */
const partsAstray = (lines: readonly Allocation[], partItems: readonly PartItem[], allocatedAtOf: ReadonlyMap<string, string>): string[] => {
  const key = ({ orderid, sku, batchref }: Pick<Allocation, 'orderid' | 'sku' | 'batchref'>) => JSON.stringify([orderid, sku, batchref]);
  const items = new Map(partItems.map((part) => [key(part), part]));
  const named = new Set<string>();
  const astray: string[] = [];
  for (const { orderid, sku, split } of lines) {
    const allocatedAt = allocatedAtOf.get(JSON.stringify([orderid, sku]));
    for (const { batchref, qty, location } of split?.parts ?? []) {
      named.add(key({ orderid, sku, batchref }));
      const item = items.get(key({ orderid, sku, batchref }));
      const name = `part of the line of order ${show(orderid)} for sku ${show(sku)} on batch ${show(batchref)}`;
      if (!item) astray.push(`${name} has no item`);
      else if (item.qty !== qty) astray.push(`${name} is of ${qty}, but its item says ${item.qty}`);
      else if (item.location !== location) astray.push(`${name} is at ${show(location)}, but its item says ${show(item.location)}`);
      else if (item.allocatedAt !== allocatedAt) astray.push(`${name} was allocated at ${allocatedAt} with its line, but its item says ${item.allocatedAt}`);
      else if (!item.listed) astray.push(`${name} is listed in no index partition of its batch that a change of it reads`);
    }
  }
  for (const part of partItems) {
    if (!named.has(key(part))) astray.push(`part item of order ${show(part.orderid)} for sku ${show(part.sku)} on batch ${show(part.batchref)} is of no line's part`);
  }
  return astray;
};

/**
 * Each batch with its pieces' units counted in its `available`, however it is spread: a spread
 * batch's pieces are exactly as many as its item says, of its spread, and it is stored among the
 * batches with stock whatever it has left; a batch kept whole there exactly when it has stock left.
 */
const withTheirPieces = (found: readonly { batch: Batch; inStockRange: boolean; spread?: Spread }[], pieces: readonly StoredPiece[]) => {
  const batches: Batch[] = [];
  const batchesOutOfPlace: Batch[] = [];
  const strayPieces: string[] = [];
  const claimed = new Set<StoredPiece>();
  for (const { batch, inStockRange, spread } of found) {
    const name = `batch ${show(batch.ref)} of sku ${show(batch.sku)}`;
    const own = spread ? pieces.filter((piece) => piece.sku === batch.sku && piece.ref === batch.ref && piece.spreadId === spread.spreadId) : [];
    for (const piece of own) claimed.add(piece);
    if (spread && own.length !== spread.pieces) strayPieces.push(`${name} is spread over ${spread.pieces} pieces, but ${own.length} are stored`);
    const piecesHeld = own.reduce((sum, { held }) => sum + held, 0);
    const { held: _, ...item } = batch;
    const counted: Batch = spread
      ? {
          ...item,
          available: batch.available + own.reduce((sum, { available }) => sum + available, 0),
          ...(heldOf(batch) + piecesHeld !== 0 ? { held: heldOf(batch) + piecesHeld } : {}),
          spreadId: spread.spreadId,
          pieces: own.map(({ piece, available, held, heldFrom, heldTakes }) => ({ piece, available, held, ...heldBoundFields({ heldFrom, heldTakes }) })),
        }
      : batch;
    batches.push(counted);
    if (inStockRange !== (spread !== undefined || hasStockLeft(counted))) batchesOutOfPlace.push(counted);
  }
  for (const piece of pieces) {
    if (!claimed.has(piece)) strayPieces.push(`piece ${piece.piece} of batch ${show(piece.ref)} of sku ${show(piece.sku)} belongs to no spread of its batch`);
  }
  return { batches, batchesOutOfPlace, strayPieces };
};

export const show = (value: string) => JSON.stringify(value);
