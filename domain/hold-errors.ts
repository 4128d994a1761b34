import { type DomainErrorCode, DomainError, noLocationBecause } from './domain-error';
import type { LineRefusal } from './model';

/* Refusals of holds (docs/api.md, "Holds", "Error codes"). */

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
