import { type Batch, byPreference, heldOf, locationOf, newBatch } from './model';

/*
 * Transfers (docs/api.md, "Transfers"): units of one SKU sent from a batch in stock at one location
 * to another, where they arrive as a shipment of their own, the transfer's incoming batch. The units
 * leave their batch when the transfer is made (its qty and available fall by them), so every unit is
 * in one batch at every moment; the incoming batch is an ordinary batch, whose ref is the
 * transferid, so lines and holds may be routed onto it as onto any shipment, and `PATCH
 * /batches/{ref}` with `eta` null receives it. A transfer is cancelled only while its incoming
 * batch is untouched: its units go back to the batch they came from, and the incoming batch goes.
 */

/** What a client asks: `qty` of `sku` from location `from` to location `to`, arriving on `eta` (YYYY-MM-DD). */
export interface TransferRequest {
  readonly transferid: string;
  readonly sku: string;
  readonly qty: number;
  readonly from: string;
  readonly to: string;
  readonly eta: string;
}

/** Active from its making; cancelled once its units went back. */
export type TransferStatus = 'active' | 'cancelled';

export interface Transfer extends TransferRequest {
  /** The batch at `from` its units were taken from, where a cancel gives them back. */
  readonly fromBatchref: string;
  readonly status: TransferStatus;
}

/** The transfer the request makes, its units taken from `source`. */
export const transferFrom = (request: TransferRequest, source: Batch): Transfer => ({ ...request, fromBatchref: source.ref, status: 'active' });

/** The batch a transfer's units arrive as: a shipment at `to` on `eta`, its ref the transferid. */
export const incomingBatchOf = ({ transferid, sku, qty, eta, to }: TransferRequest): Batch => newBatch({ ref: transferid, sku, qty, eta, location: to });

/** A repeat asks for the same transfer: every field of the request is the one stored. */
export const isSameTransfer = (stored: TransferRequest, request: TransferRequest): boolean =>
  stored.transferid === request.transferid &&
  stored.sku === request.sku &&
  stored.qty === request.qty &&
  stored.from === request.from &&
  stored.to === request.to &&
  stored.eta === request.eta;

/** The batches a transfer from `from` may take from: in stock (eta null) there, whether or not they have the units now. */
export const inStockAt = (from: string, batches: readonly Batch[]): Batch[] => batches.filter((batch) => batch.eta === null && locationOf(batch) === from);

/**
 * The batches that can give the whole qty, best first: a transfer takes from one batch, as a line
 * does, and by the rule that orders a line's batches at one place (byPreference).
 */
export const sourceCandidates = (qty: number, inStock: readonly Batch[]): Batch[] => inStock.filter((batch) => batch.available >= qty).sort(byPreference);

/**
 * Why a transfer can no longer be cancelled, judged on its incoming batch as found (its expired holds'
 * units free again): received, or anything on it, or its qty changed since (the units it holds are no
 * longer the ones taken). Undefined: it can be.
 */
export const whyNotCancellable = (transfer: Transfer, incoming: Batch): string | undefined => {
  if (incoming.eta === null) return `cannot be cancelled: its batch ${incoming.ref} has been received`;
  if (heldOf(incoming) > 0) return `cannot be cancelled: holds have units on its batch ${incoming.ref}`;
  if (incoming.qty !== transfer.qty) return `cannot be cancelled: the qty of its batch ${incoming.ref} was changed to ${incoming.qty}`;
  if (incoming.available !== incoming.qty) return `cannot be cancelled: lines have units on its batch ${incoming.ref}`;
  return undefined;
};
