/** A request the rules refuse. The HTTP edge maps each subclass to a status; the message is safe to show. */
export abstract class DomainError extends Error {
  /** Spelled out because a minified bundle renames classes, and logs and metrics key on it. */
  abstract override readonly name: string;
}

export class InvalidSku extends DomainError {
  override readonly name = 'InvalidSku';
  constructor(readonly sku: string) {
    super(`Invalid sku ${sku}`);
  }
}

export class OutOfStock extends DomainError {
  override readonly name = 'OutOfStock';
  constructor(readonly sku: string) {
    super(`Out of stock for sku ${sku}`);
  }
}

export class DuplicateBatch extends DomainError {
  override readonly name = 'DuplicateBatch';
  constructor(readonly ref: string) {
    super(`Batch ${ref} already exists`);
  }
}

/** The same (orderid, sku) was already allocated with another quantity; a line is never changed by a repeat. */
export class LineAlreadyAllocated extends DomainError {
  override readonly name = 'LineAlreadyAllocated';
  constructor(
    readonly orderid: string,
    readonly sku: string,
    readonly allocatedQty: number,
  ) {
    super(`Order ${orderid} already has a line for sku ${sku} with qty ${allocatedQty}`);
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
