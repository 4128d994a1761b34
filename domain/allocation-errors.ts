import { DomainError, type RefusalReason, noLocationBecause } from './domain-error';
import type { LineRefusal } from './model';

/* Refusals of batches, order lines and whole orders (docs/api.md, "Error codes"). */

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
    readonly kind: 'order' | 'hold' | 'cart',
    readonly id: string,
    readonly writes: number,
    readonly maxWrites: number,
  ) {
    super(`${kind === 'cart' ? "The cart's order" : `${kind === 'order' ? 'Order' : 'Hold'} ${id}`} needs ${writes} writes in one transaction, more than ${maxWrites}: allow fewer lines a split, or send fewer lines`);
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
