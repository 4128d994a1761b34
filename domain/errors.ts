import type { LineRefusal } from './model';

/** Why a line that names a known SKU is refused (OutOfStock). */
export type RefusalReason = 'out_of_stock' | 'no_location';

/**
 * What each refusal of the rules means, for a program to act on (docs/api.md, "Error codes"): stable,
 * where a message may be reworded. Some codes have several classes, a status for each: a SKU unknown
 * to a line is refused (400), one read is not found (404).
 */
export const DOMAIN_ERROR_CODES = [
  'unknown_sku',
  'out_of_stock',
  'no_location',
  'order_refused',
  'hold_refused',
  'batch_exists',
  'transfer_exists',
  'line_exists',
  'routed_otherwise',
  'split_otherwise',
  'too_many_parts',
  'hold_exists',
  'hold_ended',
  'transfer_in_use',
  'unknown_batch',
  'unknown_order',
  'unknown_line',
  'unknown_hold',
  'unknown_location',
  'inactive_location',
  'unknown_transfer',
  'validation_failed',
] as const;
export type DomainErrorCode = (typeof DOMAIN_ERROR_CODES)[number];

/** For a refusal of lines some of which no location may take: which of `location` and `destination` left none, as a message ends. */
const noLocationBecause = (lines: readonly LineRefusal[], noneBecause: string | undefined): string =>
  noneBecause !== undefined && lines.some(({ reason }) => reason === 'no_location') ? `: ${noneBecause}` : '';

/** A request the rules refuse. The HTTP edge maps each subclass to a status; the message is safe to show. */
export abstract class DomainError extends Error {
  /** Spelled out because a minified bundle renames classes, and logs and metrics key on it. */
  abstract override readonly name: string;
  abstract readonly code: DomainErrorCode;
}

export class InvalidSku extends DomainError {
  override readonly name = 'InvalidSku';
  readonly code = 'unknown_sku';
  constructor(readonly sku: string) {
    super(`Invalid sku ${sku}`);
  }
}

/**
 * No batch the request may take from can take the line whole: `out_of_stock` at every eligible
 * location, or `no_location` when no location is eligible at all (none active serves the
 * destination, or the location named is inactive or serves not the destination; domain/routing.ts).
 */
export class OutOfStock extends DomainError {
  override readonly name = 'OutOfStock';
  get code(): RefusalReason {
    return this.reason;
  }
  constructor(
    readonly sku: string,
    readonly reason: RefusalReason = 'out_of_stock',
    /** For `no_location`: which of the request's `location` and `destination` left none (Eligibility). */
    noneBecause?: string,
  ) {
    super(reason === 'no_location' ? `No location serves the request for sku ${sku}${noneBecause ? `: ${noneBecause}` : ''}` : `Out of stock for sku ${sku}`);
  }
}

export class DuplicateBatch extends DomainError {
  override readonly name = 'DuplicateBatch';
  readonly code = 'batch_exists';
  constructor(readonly ref: string) {
    super(`Batch ${ref} already exists`);
  }
}

/** The same (orderid, sku) was already allocated with another quantity; a line is never changed by a repeat. */
export class LineAlreadyAllocated extends DomainError {
  override readonly name = 'LineAlreadyAllocated';
  readonly code = 'line_exists';
  constructor(
    readonly orderid: string,
    readonly sku: string,
    readonly allocatedQty: number,
  ) {
    super(`Order ${orderid} already has a line for sku ${sku} with qty ${allocatedQty}`);
  }
}

/**
 * The same (orderid, sku) was already allocated for a request that named another `destination` or
 * `location` (domain/routing.ts, isSameRouting): the line stays where that request put it.
 */
export class LineRoutedOtherwise extends DomainError {
  override readonly name = 'LineRoutedOtherwise';
  readonly code = 'routed_otherwise';
  constructor(
    readonly orderid: string,
    readonly sku: string,
  ) {
    super(`Order ${orderid} already has a line for sku ${sku} with another destination or location`);
  }
}

/**
 * The (orderid, sku) line is allocated already with the same qty and routing for a request that
 * allowed another `split` (domain/split-lines.ts): the line stays as that request split it.
 */
export class LineSplitOtherwise extends DomainError {
  override readonly name = 'LineSplitOtherwise';
  readonly code = 'split_otherwise';
  constructor(
    readonly orderid: string,
    readonly sku: string,
  ) {
    super(`Order ${orderid} already has a line for sku ${sku} with another split`);
  }
}

/** Some lines of a whole order cannot be allocated: every one of them, with why. Nothing was allocated. */
export class OrderNotAllocated extends DomainError {
  override readonly name = 'OrderNotAllocated';
  readonly code = 'order_refused';
  constructor(
    readonly orderid: string,
    readonly lines: readonly LineRefusal[],
    /** Which of the order's `location` and `destination` left no location eligible, when none is (Eligibility). */
    noneBecause?: string,
  ) {
    super(`Cannot allocate order ${orderid}${noLocationBecause(lines, noneBecause)}`);
  }
}

/** Lines of the order are already allocated with other quantities (these); a line is never changed by a repeat. */
export class OrderLinesAlreadyAllocated extends DomainError {
  override readonly name = 'OrderLinesAlreadyAllocated';
  readonly code = 'line_exists';
  constructor(
    readonly orderid: string,
    readonly lines: readonly { readonly sku: string; readonly qty: number }[],
  ) {
    super(`Order ${orderid} already has lines with other quantities`);
  }
}

/** Lines of the order are already allocated for a request that named another `destination` or `location` (these); a line is never changed by a repeat. */
export class OrderLinesRoutedOtherwise extends DomainError {
  override readonly name = 'OrderLinesRoutedOtherwise';
  readonly code = 'routed_otherwise';
  constructor(
    readonly orderid: string,
    readonly lines: readonly { readonly sku: string }[],
  ) {
    super(`Order ${orderid} already has lines with another destination or location`);
  }
}

/** Lines of the order are already allocated for a request that allowed another `split` (these); a line is never changed by a repeat. */
export class OrderLinesSplitOtherwise extends DomainError {
  override readonly name = 'OrderLinesSplitOtherwise';
  readonly code = 'split_otherwise';
  constructor(
    readonly orderid: string,
    readonly lines: readonly { readonly sku: string }[],
  ) {
    super(`Order ${orderid} already has lines with another split`);
  }
}

/**
 * The plan of an order or a hold, its lines split as they allow (domain/order-plans.ts), needs more
 * writes than the one transaction it is written in holds (for a hold, its confirm's too): nothing
 * was written. Fewer lines allowed to split, or fewer lines, fit.
 */
export class TooManyParts extends DomainError {
  override readonly name = 'TooManyParts';
  readonly code = 'too_many_parts';
  constructor(
    readonly kind: 'order' | 'hold',
    readonly id: string,
    readonly writes: number,
    readonly maxWrites: number,
  ) {
    super(`${kind === 'order' ? 'Order' : 'Hold'} ${id} needs ${writes} writes in one transaction, more than ${maxWrites}: allow fewer lines a split, or send fewer lines`);
  }
}

export class BatchNotFound extends DomainError {
  override readonly name = 'BatchNotFound';
  readonly code = 'unknown_batch';
  constructor(readonly ref: string) {
    super(`Batch ${ref} not found`);
  }
}

export class OrderNotFound extends DomainError {
  override readonly name = 'OrderNotFound';
  readonly code = 'unknown_order';
  constructor(readonly orderid: string) {
    super(`Order ${orderid} has no allocations`);
  }
}

export class LineNotFound extends DomainError {
  override readonly name = 'LineNotFound';
  readonly code = 'unknown_line';
  constructor(
    readonly orderid: string,
    readonly sku: string,
  ) {
    super(`Order ${orderid} has no line for sku ${sku}`);
  }
}

/** A SKU never added, asked about by name (a read): the same words as InvalidSku, but nothing to refuse. */
export class UnknownSku extends DomainError {
  override readonly name = 'UnknownSku';
  readonly code = 'unknown_sku';
  constructor(readonly sku: string) {
    super(`Invalid sku ${sku}`);
  }
}

/**
 * A field of the request that its schema accepted and the rules refuse: answered as the field errors
 * of a body are, with one issue naming the field. Nothing was written.
 */
export abstract class RefusedField extends DomainError {
  /** The field of the request refused. */
  abstract readonly field: string;
}

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

/** No hold was ever placed with this holdid, or its record has outlived the day an ended hold stays readable. */
export class HoldNotFound extends DomainError {
  override readonly name = 'HoldNotFound';
  readonly code = 'unknown_hold';
  constructor(readonly holdid: string) {
    super(`Hold ${holdid} not found`);
  }
}

/** Some lines of a hold cannot be held: every one of them, with why. Nothing was held. */
export class HoldNotPlaced extends DomainError {
  override readonly name = 'HoldNotPlaced';
  readonly code = 'hold_refused';
  constructor(
    readonly holdid: string,
    readonly lines: readonly LineRefusal[],
    /** Which of the hold's `location` and `destination` left no location eligible, when none is (Eligibility). */
    noneBecause?: string,
  ) {
    super(`Cannot place hold ${holdid}${noLocationBecause(lines, noneBecause)}`);
  }
}

/**
 * The request needs the hold active, and it is not, or it asks for something else under a holdid
 * already used: the message says which. Nothing was changed.
 */
export class HoldConflict extends DomainError {
  override readonly name = 'HoldConflict';
  constructor(
    readonly holdid: string,
    readonly code: Extract<DomainErrorCode, 'hold_exists' | 'hold_ended' | 'routed_otherwise' | 'split_otherwise' | 'line_exists'>,
    why: string,
  ) {
    super(`Hold ${holdid} ${why}`);
  }
}

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
