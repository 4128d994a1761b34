import type { LineRefusal } from './model';

/*
 * What the domain's refusals share: the codes a client acts on (docs/api.md, "Error codes"), and the
 * classes every refusal extends. The refusals themselves stand by what they refuse
 * (allocation-errors.ts, location-errors.ts, hold-errors.ts); errors.ts gathers them all.
 */

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
  'shipment_exists',
  'unknown_shipment',
  'too_few_unshipped',
  'line_shipped',
  'adjustment_exists',
  'qty_changed',
  'stale_count',
  'import_exists',
  'unknown_import',
  'validation_failed',
] as const;
export type DomainErrorCode = (typeof DOMAIN_ERROR_CODES)[number];

/** For a refusal of lines some of which no location may take: which of `location` and `destination` left none, as a message ends. */
export const noLocationBecause = (lines: readonly LineRefusal[], noneBecause: string | undefined): string =>
  noneBecause !== undefined && lines.some(({ reason }) => reason === 'no_location') ? `: ${noneBecause}` : '';

/** A request the rules refuse. The HTTP edge maps each subclass to a status; the message is safe to show. */
export abstract class DomainError extends Error {
  /** Spelled out because a minified bundle renames classes, and logs and metrics key on it. */
  abstract override readonly name: string;
  abstract readonly code: DomainErrorCode;
}

/**
 * A field of the request that its schema accepted and the rules refuse: answered as the field errors
 * of a body are, with one issue naming the field. Nothing was written.
 */
export abstract class RefusedField extends DomainError {
  /** The field of the request refused. */
  abstract readonly field: string;
}

