import { DomainError, RefusedField } from './domain-error';

/* Refusals of what changes the units on hand: shipments, what shipped units forbid, and adjustments (docs/api.md, "Shipments", "Adjustments", "Error codes"). */

/** A shipment with this shipmentid was made with other lines, another order or another location; a shipmentid is used once. */
export class ShipmentExists extends DomainError {
  override readonly name = 'ShipmentExists';
  readonly code = 'shipment_exists';
  constructor(readonly shipmentid: string) {
    super(`Shipment ${shipmentid} already exists with other lines, order or location`);
  }
}

export class ShipmentNotFound extends DomainError {
  override readonly name = 'ShipmentNotFound';
  readonly code = 'unknown_shipment';
  constructor(readonly shipmentid: string) {
    super(`Shipment ${shipmentid} not found`);
  }
}

/** A line of the shipment: what it asked, and the units the order's line has not shipped at the shipment's location. */
export interface ShortLine {
  readonly sku: string;
  readonly qty: number;
  readonly unshipped: number;
}

/** Some lines have fewer units not yet shipped at the location than the shipment asks (these, with what they have there). Nothing was shipped. */
export class TooFewUnshipped extends DomainError {
  override readonly name = 'TooFewUnshipped';
  readonly code = 'too_few_unshipped';
  constructor(
    readonly shipmentid: string,
    readonly location: string,
    readonly lines: readonly ShortLine[],
  ) {
    super(`Shipment ${shipmentid} asks more units than its order's lines have not shipped at location ${location}`);
  }
}

/** The line holds no unit (it shipped them all, or shipped some and a change of its batch took the rest off its order): there is nothing left to cancel. */
export class LineShipped extends DomainError {
  override readonly name = 'LineShipped';
  readonly code = 'line_shipped';
  constructor(
    readonly orderid: string,
    readonly sku: string,
    readonly shippedQty: number,
  ) {
    super(`Order ${orderid}'s line for sku ${sku} holds no unit: it shipped ${shippedQty}, and nothing is left to cancel`);
  }
}

/** A shipment that names no location, for an order whose unshipped units are at several: a parcel leaves from one place. */
export class ShipmentLocationNeeded extends RefusedField {
  override readonly name = 'ShipmentLocationNeeded';
  readonly code = 'validation_failed';
  readonly field = 'location';
  constructor(readonly locations: readonly string[]) {
    super(`location is required: the order's unshipped units are at ${locations.length} locations (${locations.join(', ')}), and a shipment leaves from one`);
  }
}

/** The shipment needs more writes than its one transaction holds: nothing was shipped. Fewer lines, or lines of fewer parts, fit. */
export class ShipmentTooLarge extends DomainError {
  override readonly name = 'ShipmentTooLarge';
  readonly code = 'too_many_parts';
  constructor(
    readonly shipmentid: string,
    readonly writes: number,
    readonly maxWrites: number,
  ) {
    super(`Shipment ${shipmentid} needs ${writes} writes in one transaction, more than ${maxWrites}: send its lines in several shipments`);
  }
}

/** An adjustment with this adjustmentid was made with other fields; an adjustmentid is used once. */
export class AdjustmentExists extends DomainError {
  override readonly name = 'AdjustmentExists';
  readonly code = 'adjustment_exists';
  constructor(readonly adjustmentid: string) {
    super(`Adjustment ${adjustmentid} already exists with other fields`);
  }
}

/** The batch's qty is not the one the caller read (`expected_qty`): nothing changed. */
export class QtyChanged extends DomainError {
  override readonly name = 'QtyChanged';
  readonly code = 'qty_changed';
  constructor(
    readonly ref: string,
    readonly expectedQty: number,
    readonly qty: number,
  ) {
    super(`Batch ${ref} has qty ${qty}, not the ${expectedQty} expected: nothing changed`);
  }
}

/** A count taken before the last count applied to the batch: the later one stands, and nothing changed. */
export class StaleCount extends DomainError {
  override readonly name = 'StaleCount';
  readonly code = 'stale_count';
  constructor(
    readonly ref: string,
    readonly countedAt: string,
    readonly lastCountedAt: string,
  ) {
    super(`Batch ${ref} was counted at ${lastCountedAt}, after this count's ${countedAt}: nothing changed`);
  }
}

/** A field of an adjustment that the batch as it is refuses: a count's time, a delta that takes more than it has, or units counted at a place where no batch can take them. */
export class AdjustmentRefused extends RefusedField {
  override readonly name = 'AdjustmentRefused';
  readonly code = 'validation_failed';
  constructor(
    readonly field: 'counted_at' | 'delta' | 'on_hand',
    why: string,
  ) {
    super(`${field} ${why}`);
  }
}
