import {
  InactiveLocation,
  InvalidSku,
  TransferConflict,
  TransferContended,
  TransferNotFound,
  TransferNotInStock,
  TransferToItsSource,
  UnknownLocation,
} from './errors';
import { mayHoldExpiredUnits } from './holds';
import { LazyExpiry, freedExpiredHolds } from './lazy-expiry';
import { type Location, allLocationsOf } from './locations';
import { heldOf, passesOverSpread } from './model';
import type { BatchRepository, StockRead } from './ports';
import { type Transfer, type TransferRequest, inStockAt, isSameTransfer, sourceCandidates, transferFrom, whyNotCancellable } from './transfers';

/*
 * Transfers (domain/transfers.ts; docs/api.md, "Transfers"): made, read, cancelled. A transfer's
 * take is judged as a line's is (lazy expiry, a settled read before a refusal over a spread batch),
 * among the batches in stock at its `from`.
 */

/** Each lost round means another request changed a batch first; the bound keeps one request from spinning under a storm of them. */
const MAX_TRANSFER_ROUNDS = 8;

export interface TransferOutcome {
  readonly transfer: Transfer;
  /** False for a repeat of a transfer made before, answered as stored without taking stock. */
  readonly created: boolean;
}

/**
 * `from` and `to` must each be a location that exists and is active: an inactive location takes no
 * new transfer, whichever end of it, as it takes no new line or hold. Judged on the locations as read
 * now; a location made inactive after is the next request's to refuse.
 */
const checkLocations = ({ from, to }: TransferRequest, locations: readonly Location[]): void => {
  for (const [field, id] of [['from', from], ['to', to]] as const) {
    const location = locations.find((known) => known.id === id);
    if (!location) throw new UnknownLocation(id, field);
    if (!location.active) throw new InactiveLocation(id, field);
  }
};

/** A transfer already stored under the transferid: the same request again is a repeat, answered as stored; another is a conflict. */
const answerRepeat = (stored: Transfer, request: TransferRequest): TransferOutcome => {
  if (!isSameTransfer(stored, request)) throw new TransferConflict(request.transferid, 'transfer_exists', 'already exists with other fields');
  if (stored.status === 'cancelled') throw new TransferConflict(request.transferid, 'transfer_exists', 'was cancelled');
  return { transfer: stored, created: false };
};

/**
 * Takes `qty` from the best batch in stock at `from` that has it whole and sends it to `to`, where it
 * arrives on `eta` as the incoming batch: one write. The same request again answers the transfer as
 * stored (a repeat), another under the same transferid is TransferConflict.
 */
export const createTransfer = async (request: TransferRequest, repository: BatchRepository): Promise<TransferOutcome> => {
  if (request.from === request.to) throw new TransferToItsSource(request.to);
  const stored = await repository.transfer(request.transferid);
  if (stored) return answerRepeat(stored, request);
  // A plain read, not one for a take: a spread source is gathered before the take, on condition that
  // its pieces are as read, which units remembered for a take may not be.
  let read: StockRead = {};
  const expiry = new LazyExpiry();
  for (let round = 0; round < MAX_TRANSFER_ROUNDS; round++) {
    // The locations with the first read of the stock, in one read round, as an allocation reads them.
    const [stock, locations] = await Promise.all([repository.stockOf(request.sku, read), round === 0 ? repository.locations() : undefined]);
    if (!stock.known) throw new InvalidSku(request.sku);
    if (locations) {
      try {
        checkLocations(request, allLocationsOf(locations));
      } catch (error) {
        // A repeat racing its first send, made while a location was as that one read it: answered as it was.
        const made = await repository.transfer(request.transferid);
        if (made) return answerRepeat(made, request);
        throw error;
      }
    }
    const inStock = inStockAt(request.from, stock.batches);
    const [source] = sourceCandidates(request.qty, inStock);
    if (expiry.readAgain(await freedExpiredHolds(request.qty, inStock, source, repository))) continue;
    if (!read.settled && passesOverSpread(inStock, source)) {
      read = { settled: true };
      continue;
    }
    if (!source) {
      // A repeat racing its first send, which took the last units that fit: answered as that one was.
      const made = await repository.transfer(request.transferid);
      if (made) return answerRepeat(made, request);
      throw new TransferNotInStock(request.sku, request.from, request.qty);
    }
    const transfer = transferFrom(request, source);
    const result = await repository.saveTransfer(transfer, source);
    if (result.outcome === 'saved') return { transfer, created: true };
    if (result.outcome === 'transfer-exists') return answerRepeat(result.existing, request);
    if (result.outcome === 'batch-exists') throw new TransferConflict(request.transferid, 'batch_exists', `cannot be made: transferid ${request.transferid} is a batch's ref, which its incoming batch would take`);
  }
  throw new TransferContended(request.transferid, MAX_TRANSFER_ROUNDS);
};

/** The transfer as stored; a cancelled one is read as cancelled until its record expires. */
export const transferById = async (transferid: string, repository: BatchRepository): Promise<Transfer> => {
  const transfer = await repository.transfer(transferid);
  if (!transfer) throw new TransferNotFound(transferid);
  return transfer;
};

/**
 * Gives the transfer's units back to the batch they came from and removes its incoming batch, in one
 * write, while nothing has been taken from that batch nor has it been received (else
 * TransferConflict, saying which). A transfer already cancelled is done: the repeat answers as the
 * first did. The expired holds' units on the incoming batch are given back first (lazy expiry): an
 * expired hold never blocks a cancel.
 */
export const cancelTransfer = async (transferid: string, repository: BatchRepository): Promise<void> => {
  let missedBefore = false;
  for (let round = 0; round < MAX_TRANSFER_ROUNDS; round++) {
    const transfer = await transferById(transferid, repository);
    if (transfer.status === 'cancelled') return;
    const [source, incoming] = await Promise.all([repository.batch(transfer.fromBatchref, transfer.sku), repository.batch(transfer.transferid, transfer.sku)]);
    if (!source || !incoming) {
      // Nothing removes a batch but a cancel, with the transfer's active state: another cancel (a
      // repeat racing this one) committed between the two reads, which the record, read again, says.
      if (missedBefore) throw new Error(`Transfer ${transferid} is active, but its batch ${source ? transfer.transferid : transfer.fromBatchref} is not stored`);
      missedBefore = true;
      continue;
    }
    if (mayHoldExpiredUnits(incoming, repository.currentTime()) && (await repository.freeExpiredHolds(incoming, repository.currentTime(), heldOf(incoming))) > 0) continue;
    const why = whyNotCancellable(transfer, incoming);
    if (why) {
      // A repeat racing its first send, which cancelled the transfer after this one read its batch: answered as that one was.
      if ((await transferById(transferid, repository)).status === 'cancelled') return;
      throw new TransferConflict(transferid, 'transfer_in_use', why);
    }
    const cancelled = await repository.cancelTransfer(transfer, source, incoming);
    if (cancelled === 'saved') return;
    if (cancelled === 'incoming-changed') throw new TransferConflict(transferid, 'transfer_in_use', `cannot be cancelled: its batch ${incoming.ref} was changed since it was made (received, or by a PATCH)`);
  }
  throw new TransferContended(transferid, MAX_TRANSFER_ROUNDS);
};
