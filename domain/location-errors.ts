import { type DomainErrorCode, DomainError, RefusedField } from './domain-error';

/* Refusals of locations and of transfers between them (docs/api.md, "Error codes"). */

/** A location's body names another id than its path: a body read with `GET` may be sent back whole, but only to its own location. */
export class LocationIdNotThePath extends RefusedField {
  override readonly name = 'LocationIdNotThePath';
  readonly code = 'validation_failed';
  readonly field = 'id';
  constructor(
    readonly pathId: string,
    readonly bodyId: string,
  ) {
    super(`id must be the path's, ${pathId}, or absent: the body names ${bodyId}`);
  }
}

/** A batch, or a transfer's `from` or `to`, names a location that does not exist. */
export class UnknownLocation extends RefusedField {
  override readonly name = 'UnknownLocation';
  readonly code = 'unknown_location';
  constructor(
    readonly location: string,
    readonly field: string = 'location',
  ) {
    super(`${field} must be the id of an existing location: there is no location ${location}`);
  }
}

/** A transfer's `from` or `to` names an inactive location: an inactive location takes no new transfer, as it takes no new line or hold. */
export class InactiveLocation extends RefusedField {
  override readonly name = 'InactiveLocation';
  readonly code = 'inactive_location';
  constructor(
    readonly location: string,
    readonly field: string,
  ) {
    super(`${field} must be an active location: location ${location} is inactive`);
  }
}

/** A transfer whose `to` is its `from`: units that go nowhere. */
export class TransferToItsSource extends RefusedField {
  override readonly name = 'TransferToItsSource';
  readonly code = 'validation_failed';
  readonly field = 'to';
  constructor(readonly location: string) {
    super(`to must be another location than from: both are ${location}`);
  }
}

/** No batch in stock at the transfer's `from` has its whole qty. Nothing was written. */
export class TransferNotInStock extends DomainError {
  override readonly name = 'TransferNotInStock';
  readonly code = 'out_of_stock';
  constructor(
    readonly sku: string,
    readonly from: string,
    readonly qty: number,
  ) {
    super(`No batch in stock at location ${from} has ${qty} ${qty === 1 ? 'unit' : 'units'} of sku ${sku}`);
  }
}

export class TransferNotFound extends DomainError {
  override readonly name = 'TransferNotFound';
  readonly code = 'unknown_transfer';
  constructor(readonly transferid: string) {
    super(`Transfer ${transferid} not found`);
  }
}

/**
 * The transferid is taken by another transfer (or the cancelled one), or by a batch's ref (the
 * incoming batch takes the transferid as its ref), or the transfer can no longer be cancelled: the
 * code and the message say which. Nothing was changed.
 */
export class TransferConflict extends DomainError {
  override readonly name = 'TransferConflict';
  constructor(
    readonly transferid: string,
    readonly code: Extract<DomainErrorCode, 'transfer_exists' | 'batch_exists' | 'transfer_in_use'>,
    why: string,
  ) {
    super(`Transfer ${transferid} ${why}`);
  }
}

export class LocationNotFound extends DomainError {
  override readonly name = 'LocationNotFound';
  readonly code = 'unknown_location';
  constructor(readonly id: string) {
    super(`Location ${id} not found`);
  }
}
