import { type Adjustment, type AdjustmentRequest, type CountBasis, adjustedQty, countTimeOf, countTimeRefused, isSameAdjustment } from './adjustments';
import { changeBatchAs, finishChange } from './batch-changes';
import { AdjustmentExists, AdjustmentRefused, QtyChanged, StaleCount } from './errors';
import type { Batch, Reallocation } from './model';
import type { BatchRepository } from './ports';

/*
 * Adjustments (domain/adjustments.ts; docs/api.md, "Adjustments"): a change of one batch's units on
 * hand, made as a PATCH of its qty is (changeBatchAs: holds end first, then the newest unshipped
 * lines move), and recorded in the change's own write.
 */

export interface AdjustmentOutcome {
  readonly adjustment: Adjustment;
  /** The lines this call moved off the batch; a repeat lists those it moved to finish an adjustment cut off. */
  readonly reallocated: Reallocation[];
  /** False for a repeat of an adjustment made before, answered as stored. */
  readonly created: boolean;
  /** The batch as found once the call is done. */
  readonly batch: Batch;
}

/** The adjustment was recorded by another send of it between this one's rounds: its repeat answers. */
class AdjustedMeanwhile extends Error {
  constructor(readonly stored: Adjustment) {
    super(`Adjustment ${stored.adjustmentid} was made meanwhile`);
  }
}

/** A repeat of the request: answered as stored, once the change it made is finished (lines it left to move, moved). */
const answerRepeat = async (stored: Adjustment, request: AdjustmentRequest, repository: BatchRepository): Promise<AdjustmentOutcome> => {
  if (!isSameAdjustment(stored, request)) throw new AdjustmentExists(request.adjustmentid);
  const { batch, reallocated } = await finishChange(stored.ref, repository);
  return { adjustment: stored, reallocated, created: false, batch };
};

/**
 * Changes the batch's units on hand as the request says, for its reason: `qty` sets them (a count,
 * as of `countedAt`: with every change of the batch since on top), `delta` adds or takes some; on the batch as
 * `expectedQty` says, when it names one. Each round judges the batch as read, and its write is
 * conditioned on that read, so what another request changes in between is judged again.
 */
export const adjustStock = async (asked: AdjustmentRequest, repository: BatchRepository): Promise<AdjustmentOutcome> => {
  // One moment, one text: counts compare as text, and a repeat must name the same time however it is written.
  const request = asked.countedAt === undefined ? asked : { ...asked, countedAt: new Date(asked.countedAt).toISOString() };
  const stored = await repository.adjustment(request.adjustmentid);
  if (stored) return answerRepeat(stored, request, repository);
  if (request.countedAt !== undefined) {
    const refused = countTimeRefused(request.countedAt, repository.currentTime());
    if (refused) throw new AdjustmentRefused('counted_at', refused);
  }
  let recorded: Adjustment | undefined;
  let rounds = 0;
  try {
    const { batch, reallocated } = await changeBatchAs(
      request.ref,
      async (batch) => {
        // A round after a write that found something changed: another send of this adjustment may be what changed it.
        const madeMeanwhile = rounds++ > 0 ? await repository.adjustment(request.adjustmentid) : undefined;
        if (madeMeanwhile) throw new AdjustedMeanwhile(madeMeanwhile);
        // Another send of this adjustment, made since this one last looked for it, leaves the batch as
        // a refusal reads it (its qty set, its units taken, a later count applied after it): a refusal
        // looks again first, and the repeat answers.
        const refuse = async (refusal: Error): Promise<never> => {
          const made = await repository.adjustment(request.adjustmentid);
          throw made ? new AdjustedMeanwhile(made) : refusal;
        };
        if (request.expectedQty !== undefined && batch.qty !== request.expectedQty) return refuse(new QtyChanged(request.ref, request.expectedQty, batch.qty));
        const adjustedAt = new Date(repository.currentTime()).toISOString();
        const countedAt = countTimeOf({ ...request, before: batch.qty, after: batch.qty, adjustedAt });
        const basis = countedAt === undefined ? undefined : await countBasisOf(request, countedAt, repository).catch((error: unknown) => (error instanceof StaleCount ? refuse(error) : Promise.reject(error)));
        const after = adjustedQty(request, batch.qty, basis);
        if (after < 0) return refuse(new AdjustmentRefused('delta', `must not take more than batch ${request.ref} has: its qty is ${batch.qty}`));
        recorded = { ...request, before: batch.qty, after, adjustedAt };
        return { change: { qty: after }, adjustment: recorded, ...(basis ? { changesRead: basis.changesRead } : {}) };
      },
      repository,
    );
    if (!recorded) throw new Error(`Adjustment ${request.adjustmentid} of batch ${request.ref} was written without its record`);
    return { adjustment: recorded, reallocated, created: true, batch };
  } catch (error) {
    if (error instanceof AdjustedMeanwhile) return answerRepeat(error.stored, request, repository);
    throw error;
  }
};

/** The basis of a count: refused when a later count was applied to the batch. */
const countBasisOf = async (request: AdjustmentRequest, countedAt: string, repository: BatchRepository): Promise<CountBasis> => {
  const basis = await repository.countBasis(request.ref, countedAt);
  if (basis.lastCountedAt !== undefined && basis.lastCountedAt > countedAt) throw new StaleCount(request.ref, countedAt, basis.lastCountedAt);
  return basis;
};
