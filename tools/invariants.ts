import { type Instant, earliestHeldExpiry, statusAt } from '../domain/holds';
import { DEFAULT_LOCATION_ID } from '../domain/locations';
import { type Allocation, type Batch, allocatedOf, heldOf, locationOf, partsOf } from '../domain/model';
import type { Shipment } from '../domain/shipments';
import type { RecordedStockChange } from '../functions/store/stock-changes';
import { changesRecorded } from './changes-recorded';
import type { DocumentSender } from '../functions/store/store-calls';
import { type Inventory, readInventory, show } from './inventory';

export { type Inventory, readInventory } from './inventory';

export type Rule =
  | 'stock-never-negative'
  | 'stock-matches-lines'
  | 'line-in-batch-of-its-sku'
  | 'held-for-an-active-hold'
  | 'held-units-counted'
  | 'held-units-bounded'
  | 'active-hold-holds-its-units'
  | 'batch-ref-unique'
  | 'batch-ref-reserved'
  | 'batch-where-its-stock-says'
  | 'sku-known-with-batches'
  | 'sku-listed-where-its-batches-are'
  | 'item-recognized'
  | 'pieces-of-their-spread'
  | 'line-listed-where-read'
  | 'parts-as-their-line-says'
  | 'batch-at-a-location'
  | 'transfer-accounted'
  | 'shipped-as-recorded'
  | 'changes-recorded';

export interface Violation {
  readonly rule: Rule;
  readonly message: string;
}

/**
 * What must be true of any state the service leaves behind, however requests raced or failed:
 * stock is never negative, each batch's qty is exactly its available units, the units its lines
 * hold and the units its holds hold, every line sits in a batch of its own SKU, a batch reference
 * names one batch, a batch is stored among those with stock exactly when it has some left, available
 * or held (allocations read only those), a SKU is known exactly when it has
 * batches ("Invalid sku" depends on it once every batch is exhausted), every batch is at a
 * location that exists, and an active transfer's units are where it says: its source batch, at its
 * `from`, gave them up (its qty fell with them, so the batch's own count above holds it to what it
 * has left), and its incoming batch, at its `to`, has them.
 */
export const findViolations = (
  { batches, heldUnits, batchesOutOfPlace, knownSkus, listedAt, references, lines, holds, unrecognized, strayPieces, linesListedUnread, partsAstray, locations, transfers, shipments, stockChanges }: Inventory,
  now?: Instant,
): Violation[] => {
  const violations: Violation[] = [];
  const batchBySkuAndRef = new Map(batches.map((batch) => [JSON.stringify([batch.sku, batch.ref]), batch]));
  const heldByBatch = new Map<Batch, number>();

  // Each part of a split line counts on its own batch.
  for (const line of lines) {
    for (const { batchref, qty } of partsOf(line)) {
      const batch = batchBySkuAndRef.get(JSON.stringify([line.sku, batchref]));
      if (batch) {
        heldByBatch.set(batch, (heldByBatch.get(batch) ?? 0) + qty);
        continue;
      }
      const elsewhere = batches.find((candidate) => candidate.ref === batchref);
      violations.push({
        rule: 'line-in-batch-of-its-sku',
        message:
          `line of order ${show(line.orderid)} for sku ${show(line.sku)} points at batch ${show(batchref)}, ` +
          (elsewhere ? `which holds sku ${show(elsewhere.sku)}` : 'which does not exist'),
      });
    }
  }

  for (const batch of batches) {
    const name = `batch ${show(batch.ref)} of sku ${show(batch.sku)}`;
    for (const { piece, available } of batch.pieces ?? []) {
      if (available < 0) violations.push({ rule: 'stock-never-negative', message: `${name} has available ${available} in its piece ${piece}` });
    }
    const ownUnits = batch.available - (batch.pieces ?? []).reduce((sum, { available }) => sum + available, 0);
    if (batch.pieces && ownUnits < 0) violations.push({ rule: 'stock-never-negative', message: `${name} is spread, and has available ${ownUnits} of its own` });
    if (batch.available < 0) {
      violations.push({
        rule: 'stock-never-negative',
        message:
          `${name} has available ${batch.available}: its lines hold ${-batch.available} more than its qty ` +
          '(a change of its qty cut off before it moved them: repeat the PATCH to finish it)',
      });
    }
    const onLines = heldByBatch.get(batch) ?? 0;
    const onHolds = heldOf(batch);
    if (allocatedOf(batch) !== onLines) {
      const holds = onHolds > 0 ? ` - held ${onHolds}` : '';
      violations.push({
        rule: 'stock-matches-lines',
        message: `${name}: qty ${batch.qty} - available ${batch.available}${holds} = ${allocatedOf(batch)}, but its lines hold ${onLines}`,
      });
    }
  }

  // A record of held units belongs to a hold still active as written, for that batch, qty and
  // source, until the hold's own expiry: an ended hold gave its units back (or they became lines) in
  // the write that ended it, and an extension moves the record's expiry and its records' in one write.
  const holdById = new Map(holds.map((hold) => [hold.holdid, hold]));
  for (const { units, sku, ref, source } of heldUnits) {
    const { holdid, qty, expiresAt } = units;
    const hold = holdById.get(holdid);
    const line = hold?.lines.find(({ sku: lineSku, batchref }) => lineSku === sku && batchref === ref);
    const named = (line?.sources ?? [{ qty: line?.qty ?? 0 }]).some((some) => some.qty === source.qty && some.piece === source.piece && some.spreadId === source.spreadId);
    if (hold?.status === 'active' && line?.qty === qty && hold.expiresAt === expiresAt && named) continue;
    violations.push({
      rule: 'held-for-an-active-hold',
      message:
        `batch ${show(ref)} of sku ${show(sku)} holds ${source.qty} until ${expiresAt} for hold ${show(holdid)}, ` +
        (hold === undefined
          ? 'which does not exist'
          : hold.status !== 'active'
            ? `which is ${hold.status}`
            : line?.qty !== qty
              ? `whose line there is ${line ? `of ${line.qty}` : 'missing'}`
              : hold.expiresAt !== expiresAt
                ? `which lasts until ${hold.expiresAt}`
                : 'whose line does not name this source'),
    });
  }

  // A batch counts exactly the held units its holds' records hold, over its items: its own item's
  // count and its pieces' (any piece of a spread may count a hold's units, and one alone may be below zero).
  const recordedOn = new Map<string, number>();
  for (const { sku, ref, source } of heldUnits) recordedOn.set(JSON.stringify([sku, ref]), (recordedOn.get(JSON.stringify([sku, ref])) ?? 0) + source.qty);
  for (const batch of batches) {
    const recorded = recordedOn.get(JSON.stringify([batch.sku, batch.ref])) ?? 0;
    if (recorded === heldOf(batch)) continue;
    violations.push({
      rule: 'held-units-counted',
      message: `batch ${show(batch.ref)} of sku ${show(batch.sku)} counts ${heldOf(batch)} held, where holds' records hold ${recorded}`,
    });
  }

  // No record of held units on a batch expires before the batch's bound, when its items keep one
  // (functions/store/held-bounds.ts, "Bounds of held units"): lazy expiry reads only the batches whose
  // bound has come, so a record below it would be given back by the sweeper alone.
  const batchByKey = new Map(batches.map((batch) => [JSON.stringify([batch.sku, batch.ref]), batch]));
  for (const { units, sku, ref } of heldUnits) {
    const batch = batchByKey.get(JSON.stringify([sku, ref]));
    const bound = batch && earliestHeldExpiry(batch);
    if (bound === undefined || units.expiresAt >= bound) continue;
    violations.push({
      rule: 'held-units-bounded',
      message: `batch ${show(ref)} of sku ${show(sku)} holds units until ${units.expiresAt} for hold ${show(units.holdid)}, before its bound ${bound}`,
    });
  }

  // An active hold that has not expired by `now` still has its units on every batch of its lines:
  // only its own end, or a write after its expiry, removes them. Judged only at a given time.
  for (const hold of now === undefined ? [] : holds.filter((hold) => statusAt(hold, now) === 'active')) {
    for (const { sku, qty, batchref } of hold.lines) {
      const recorded = heldUnits.filter((record) => record.units.holdid === hold.holdid && record.ref === batchref && record.sku === sku);
      const units = recorded.reduce((sum, { source }) => sum + source.qty, 0);
      if (units === qty) continue;
      violations.push({
        rule: 'active-hold-holds-its-units',
        message: `hold ${show(hold.holdid)}, active until ${hold.expiresAt}, holds ${qty} of sku ${show(sku)} on batch ${show(batchref)}, whose records hold ${units} for it`,
      });
    }
  }

  const skusByRef = new Map<string, string[]>();
  for (const batch of batches) skusByRef.set(batch.ref, [...(skusByRef.get(batch.ref) ?? []), batch.sku]);
  for (const [ref, skus] of skusByRef) {
    if (skus.length > 1) {
      violations.push({
        rule: 'batch-ref-unique',
        message: `batch ${show(ref)} exists for ${skus.length} skus: ${skus.map(show).join(', ')}`,
      });
    }
  }
  const referenced = new Set(references.map(({ ref, sku }) => JSON.stringify([sku, ref])));
  for (const batch of batches) {
    if (!referenced.has(JSON.stringify([batch.sku, batch.ref]))) {
      violations.push({
        rule: 'batch-ref-reserved',
        message: `batch ${show(batch.ref)} of sku ${show(batch.sku)} has no reference item reserving its ref`,
      });
    }
  }
  for (const { ref, sku } of references) {
    if (!batchBySkuAndRef.has(JSON.stringify([sku, ref]))) {
      violations.push({
        rule: 'batch-ref-reserved',
        message: `reference of batch ${show(ref)} names sku ${show(sku)}, which has no such batch`,
      });
    }
  }

  for (const batch of batchesOutOfPlace) {
    violations.push({
      rule: 'batch-where-its-stock-says',
      message:
        `batch ${show(batch.ref)} of sku ${show(batch.sku)} has available ${batch.available} but is stored among the batches ` +
        (batch.available > 0 ? 'without stock, where allocations never look' : 'with stock'),
    });
  }

  const skusWithBatches = new Set(batches.map(({ sku }) => sku));
  const known = new Set(knownSkus);
  for (const sku of skusWithBatches) {
    if (!known.has(sku)) {
      violations.push({ rule: 'sku-known-with-batches', message: `sku ${show(sku)} has batches but no known-SKU item` });
    }
  }
  for (const sku of knownSkus) {
    if (!skusWithBatches.has(sku)) {
      violations.push({ rule: 'sku-known-with-batches', message: `sku ${show(sku)} is known but has no batch` });
    }
  }

  const listed = new Set(listedAt.map(({ sku, location }) => JSON.stringify([sku, location])));
  for (const batch of batches) {
    if (!listed.has(JSON.stringify([batch.sku, locationOf(batch)]))) {
      violations.push({ rule: 'sku-listed-where-its-batches-are', message: `sku ${show(batch.sku)} has batch ${show(batch.ref)} at ${show(locationOf(batch))} but is not in that location's list` });
    }
  }

  for (const { pk, sk } of unrecognized) {
    violations.push({
      rule: 'item-recognized',
      message: `item pk ${show(pk)} sk ${show(sk)} is not a batch, piece of a batch, known SKU, SKU at a location, batch reference, line, notice, hold, location, transfer or shipment`,
    });
  }
  for (const message of strayPieces) violations.push({ rule: 'pieces-of-their-spread', message });
  // A batch is at the built-in `default` or at a location stored: its transaction checked that it was, and no location is ever removed.
  const placed = new Set([DEFAULT_LOCATION_ID, ...locations]);
  for (const batch of batches) {
    if (placed.has(locationOf(batch))) continue;
    violations.push({ rule: 'batch-at-a-location', message: `batch ${show(batch.ref)} of sku ${show(batch.sku)} is at location ${show(locationOf(batch))}, which does not exist` });
  }
  // Only a cancel removes a transfer's incoming batch, in the write that marks it cancelled; and no batch leaves its location.
  for (const transfer of transfers.filter(({ status }) => status === 'active')) {
    const name = `active transfer ${show(transfer.transferid)} of ${transfer.qty} of sku ${show(transfer.sku)}`;
    for (const [end, ref, location] of [['source', transfer.fromBatchref, transfer.from], ['incoming', transfer.transferid, transfer.to]] as const) {
      const batch = batchBySkuAndRef.get(JSON.stringify([transfer.sku, ref]));
      if (batch && locationOf(batch) === location) continue;
      violations.push({
        rule: 'transfer-accounted',
        message: `${name} has its ${end} batch ${show(ref)} at ${show(location)}, ` + (batch ? `but that batch is at ${show(locationOf(batch))}` : 'but no such batch exists'),
      });
    }
  }
  for (const message of partsAstray) violations.push({ rule: 'parts-as-their-line-says', message });
  for (const { orderid, sku, batchref, qty } of linesListedUnread) {
    violations.push({
      rule: 'line-listed-where-read',
      message:
        qty > 0
          ? `line of order ${show(orderid)} for sku ${show(sku)} is listed in no index partition of batch ${show(batchref)} that a change of it reads (written with another number of shards?)`
          : `line of order ${show(orderid)} for sku ${show(sku)} holds no unit, but is listed under batch ${show(batchref)}, where a change of it would read it`,
    });
  }
  violations.push(...shippedAsRecorded(lines, shipments, stockChanges));
  violations.push(...changesRecorded(batches, stockChanges, now ?? Date.now()));
  return violations;
};

/**
 * Every unit a line says it shipped from a batch, a shipment of its order took from that batch, and
 * the other way round: a shipment's write records both, and nothing else changes either.
 */
const shippedAsRecorded = (lines: readonly Allocation[], shipments: readonly Shipment[], changes: readonly RecordedStockChange[]): Violation[] => {
  const key = (orderid: string, sku: string, batchref: string) => JSON.stringify([orderid, sku, batchref]);
  const recorded = new Map<string, number>();
  for (const { orderid, lines: shipped } of shipments) {
    for (const { sku, parts } of shipped) for (const { batchref, qty } of parts) recorded.set(key(orderid, sku, batchref), (recorded.get(key(orderid, sku, batchref)) ?? 0) + qty);
  }
  const violations: Violation[] = [];
  for (const { orderid, sku, shipped = [] } of lines) {
    for (const { batchref, qty } of shipped) {
      const byShipments = recorded.get(key(orderid, sku, batchref)) ?? 0;
      recorded.delete(key(orderid, sku, batchref));
      if (byShipments === qty) continue;
      violations.push({
        rule: 'shipped-as-recorded',
        message: `line of order ${show(orderid)} for sku ${show(sku)} shipped ${qty} from batch ${show(batchref)}, where its order's shipments took ${byShipments}`,
      });
    }
  }
  // A batch's change for a shipment, which a count taken before it applies, says what that shipment took from the batch, and when.
  for (const { ref, delta, reference = '', at } of changes.filter(({ reason }) => reason === 'shipped')) {
    const shipment = shipments.find((found) => found.shipmentid === reference);
    const took = shipment?.lines.flatMap(({ parts }) => parts).reduce((sum, part) => (part.batchref === ref ? sum + part.qty : sum), 0);
    if (shipment && shipment.shippedAt === at && took === -delta) continue;
    violations.push({
      rule: 'shipped-as-recorded',
      message: `batch ${show(ref)} records ${-delta} shipped at ${at} by shipment ${show(reference)}, ` + (shipment ? `which took ${took} from it at ${shipment.shippedAt}` : 'which does not exist'),
    });
  }
  for (const [unlined, qty] of recorded) {
    const [orderid = '', sku = '', batchref = ''] = JSON.parse(unlined) as string[];
    violations.push({
      rule: 'shipped-as-recorded',
      message: `shipments of order ${show(orderid)} took ${qty} of sku ${show(sku)} from batch ${show(batchref)}, which no line of the order says it shipped`,
    });
  }
  return violations;
};

/**
 * Reads the table and answers what is wrong with it; an empty list means every invariant holds. It
 * writes nothing. With `now`, holds are judged at that time too (the CLI gives the time before it reads).
 */
export const checkInvariants = async (client: DocumentSender, tableName: string, now?: Instant): Promise<Violation[]> =>
  findViolations(await readInventory(client, tableName), now);
