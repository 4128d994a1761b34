import { LineNotFound, OrderNotFound, ShipmentContended, ShipmentExists, ShipmentLocationNeeded, ShipmentNotFound, ShipmentTooLarge, TooFewUnshipped } from './errors';
import { finishChange } from './batch-changes';
import type { Batch } from './model';
import type { BatchRepository } from './ports';
import { type Shipment, type ShipmentRequest, isSameShipment, shipFromLine, shipmentLocationOf, unshippedAt, unshippedParts } from './shipments';

/*
 * Shipments (domain/shipments.ts; docs/api.md, "Shipments"): made and read. A shipment is one write
 * of the lines as read and their batches, so two shipments of one line, or a shipment and a move or
 * a cancel of it, never both count the same units: the second finds the line changed and reads again.
 */

/** Each lost round means another request changed a line or a batch first; the bound keeps one request from spinning under a storm of them. */
const MAX_SHIPMENT_ROUNDS = 8;

export interface ShipmentOutcome {
  readonly shipment: Shipment;
  /** False for a repeat of a shipment made before, answered as stored without shipping again. */
  readonly created: boolean;
}

const answerRepeat = (stored: Shipment, request: ShipmentRequest): ShipmentOutcome => {
  if (!isSameShipment(stored, request)) throw new ShipmentExists(request.shipmentid);
  return { shipment: stored, created: false };
};

/**
 * Ships the units the request names of its order's lines from `location` (where the order's unshipped
 * units all are, when it names none): each line's parts there, in their order, lose the units, and so
 * does each batch's `qty`, in one write with the shipment's record. The same request again answers the
 * shipment as stored; another under the same shipmentid is ShipmentExists.
 */
export const ship = async (request: ShipmentRequest, repository: BatchRepository): Promise<ShipmentOutcome> => {
  const stored = await repository.shipment(request.shipmentid);
  if (stored) return answerRepeat(stored, request);
  for (let round = 0; round < MAX_SHIPMENT_ROUNDS; round++) {
    const lines = await repository.locatedLinesOf(request.orderid);
    if (lines.length === 0) throw new OrderNotFound(request.orderid);
    const asked = request.lines.map(({ sku, qty }) => {
      const line = lines.find((found) => found.sku === sku);
      if (!line) throw new LineNotFound(request.orderid, sku);
      return { line, qty };
    });
    const location = request.location ?? shipmentLocationOf(lines);
    if (location === undefined) throw new ShipmentLocationNeeded([...new Set(lines.flatMap((line) => unshippedParts(line).map((part) => part.location)))].sort());
    const short = asked.filter(({ line, qty }) => unshippedAt(line, location) < qty);
    if (short.length > 0) {
      // A repeat whose first send shipped them, and whose answer was lost.
      const made = await repository.shipment(request.shipmentid);
      if (made) return answerRepeat(made, request);
      throw new TooFewUnshipped(request.shipmentid, location, short.map(({ line, qty }) => ({ sku: line.sku, qty, unshipped: unshippedAt(line, location) })));
    }
    const shipped = asked.map(({ line, qty }) => ({ line, qty, ...shipFromLine(line, location, qty) }));
    const batchesOf = shipped.flatMap(({ line, parts }) => parts.map(({ batchref }) => ({ batchref, sku: line.sku })));
    const batches = await Promise.all(batchesOf.map(({ batchref, sku }) => repository.batch(batchref, sku)));
    // A line's batch is never removed while it holds the line's units: one not found was read between two writes that moved it.
    if (batches.some((batch) => batch === undefined)) continue;
    // A batch a change left with fewer units than its lines hold (their moves not yet written) has
    // not the units to ship: the change is finished here, as its repeat would finish it, and the
    // lines are read again where it put them.
    const shippedFrom = (batch: Batch) => shipped.reduce((sum, { parts }) => sum + parts.reduce((partSum, part) => (part.batchref === batch.ref ? partSum + part.qty : partSum), 0), 0);
    const lacking = (batches as Batch[]).filter((batch) => batch.qty < shippedFrom(batch));
    if (lacking.length > 0) {
      for (const batch of lacking) await finishChange(batch.ref, repository);
      continue;
    }
    const shipment: Shipment = {
      shipmentid: request.shipmentid,
      orderid: request.orderid,
      location,
      shippedAt: new Date(repository.currentTime()).toISOString(),
      lines: shipped.map(({ line, qty, parts }) => ({ sku: line.sku, qty, parts })),
    };
    const result = await repository.saveShipment(shipment, shipped.map(({ line, after }) => ({ before: line, after })), batches as Batch[]);
    if (result.outcome === 'saved') return { shipment: { ...shipment, shippedAt: result.shippedAt }, created: true };
    if (result.outcome === 'shipment-exists') return answerRepeat(result.existing, request);
    if (result.outcome === 'too-many-writes') throw new ShipmentTooLarge(request.shipmentid, result.writes, result.maxWrites);
  }
  throw new ShipmentContended(request.shipmentid, MAX_SHIPMENT_ROUNDS);
};

export const shipmentById = async (shipmentid: string, repository: BatchRepository): Promise<Shipment> => {
  const shipment = await repository.shipment(shipmentid);
  if (!shipment) throw new ShipmentNotFound(shipmentid);
  return shipment;
};
