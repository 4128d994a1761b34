import type { CancellationReason } from '@aws-sdk/client-dynamodb';

/** Cancellation codes that say nothing about the data: the same transaction can succeed if tried again. */
const TRANSIENT_CANCELLATION_CODES = new Set(['TransactionConflict', 'ThrottlingError']);

/** Errors left once the SDK's own retries are spent, which mean "the store cannot answer now". */
const UNAVAILABLE_ERROR_NAMES = new Set([
  'ProvisionedThroughputExceededException',
  'RequestLimitExceeded',
  'ThrottlingException',
  'TransactionInProgressException',
  'InternalServerError',
  'ServiceUnavailable',
  'RequestTimeout',
  'RequestTimeoutException',
  'TimeoutError',
]);

const NETWORK_ERROR_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
]);

interface AwsErrorShape {
  name?: string;
  code?: string;
  $metadata?: { httpStatusCode?: number };
  CancellationReasons?: CancellationReason[];
}

const shapeOf = (error: unknown): AwsErrorShape => (typeof error === 'object' && error !== null ? error : {});

/** The reasons of a cancelled transaction, in the order of its items; undefined for any other error. */
export const transactionCancellation = (error: unknown): CancellationReason[] | undefined => {
  const { name, CancellationReasons } = shapeOf(error);
  return name === 'TransactionCanceledException' ? (CancellationReasons ?? []) : undefined;
};

/** A failed condition is an answer about the data, so it wins over a conflict on another item. */
export const isRetryableCancellation = (reasons: readonly CancellationReason[]): boolean =>
  !reasons.some((reason) => reason.Code === 'ConditionalCheckFailed') &&
  reasons.some((reason) => TRANSIENT_CANCELLATION_CODES.has(reason.Code ?? ''));

export const isStoreUnavailable = (error: unknown): boolean => {
  const { name = '', code = '', $metadata } = shapeOf(error);
  return (
    UNAVAILABLE_ERROR_NAMES.has(name) ||
    NETWORK_ERROR_CODES.has(code) ||
    NETWORK_ERROR_CODES.has(name) ||
    ($metadata?.httpStatusCode ?? 0) >= 500
  );
};
