/*
 * The domain's refusals, and the failures that a retry continues: every error the rules raise, as one
 * module for the HTTP edge's map, the OpenAPI document and the tests that enumerate them. The
 * refusals stand by what they refuse; the transient failures stand here.
 */

export * from './domain-error';
export * from './allocation-errors';
export * from './location-errors';
export * from './hold-errors';
export * from './stock-errors';
export * from './import-errors';

/** The request cannot complete now, and nothing of it was written: repeating it is safe. */
export abstract class TransientFailure extends Error {
  abstract override readonly name: string;
}

/** The store could not be reached, or kept refusing (throttling, conflicts) past the repository's retries. */
export class StoreUnavailable extends TransientFailure {
  override readonly name = 'StoreUnavailable';
}

/** Other requests kept changing the batch between this one's read and its write; a retry continues. */
export class BatchContended extends TransientFailure {
  override readonly name = 'BatchContended';
  constructor(
    readonly ref: string,
    rounds: number,
  ) {
    super(`Batch ${ref} changed under ${rounds} attempts in a row`);
  }
}

/** Other requests took the stock this one chose, round after round; the next try will likely find its way. */
export class AllocationContended extends TransientFailure {
  override readonly name = 'AllocationContended';
  constructor(
    readonly sku: string,
    rounds: number,
  ) {
    super(`Allocation for sku ${sku} lost ${rounds} rounds of races for stock`);
  }
}

/** Other requests kept replacing the location between this one's read and its write; a retry continues. */
export class LocationContended extends TransientFailure {
  override readonly name = 'LocationContended';
  constructor(
    readonly id: string,
    rounds: number,
  ) {
    super(`Location ${id} changed under ${rounds} attempts in a row`);
  }
}

/** Other requests kept changing the hold or its batches between this one's read and its write; a retry continues. */
export class HoldContended extends TransientFailure {
  override readonly name = 'HoldContended';
  constructor(
    readonly holdid: string,
    rounds: number,
  ) {
    super(`Hold ${holdid} changed under ${rounds} attempts in a row`);
  }
}

/** Other requests kept changing the transfer's batches between this one's read and its write; a retry continues. */
export class TransferContended extends TransientFailure {
  override readonly name = 'TransferContended';
  constructor(
    readonly transferid: string,
    rounds: number,
  ) {
    super(`Transfer ${transferid} lost ${rounds} rounds of races for its batches`);
  }
}

/** Other requests kept changing the order's lines or their batches between this one's read and its write; a retry continues. */
export class ShipmentContended extends TransientFailure {
  override readonly name = 'ShipmentContended';
  constructor(
    readonly shipmentid: string,
    rounds: number,
  ) {
    super(`Shipment ${shipmentid} found its lines or batches changed under ${rounds} attempts in a row`);
  }
}
