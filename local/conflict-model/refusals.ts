/*
 * The answers DynamoDB gives a request it refuses for a conflict or for throttling, as its JSON
 * protocol carries them (HTTP 400, `__type` naming the exception), so that the SDK raises its own
 * exception classes with their fields filled in. The wording is DynamoDB's, from the API reference
 * and DynamoDB Local's own cancellations (docs/conflict-model.md lists the sources).
 */

const EXCEPTION_TYPE_PREFIX = 'com.amazonaws.dynamodb.v20120810#';

export interface Refusal {
  readonly status: 400;
  readonly body: Readonly<Record<string, unknown>>;
}

export interface CancellationReason {
  readonly Code: string;
  readonly Message?: string;
}

/** An item that did not stop the transaction: DynamoDB writes the code "None" and no message. */
export const NO_REASON: CancellationReason = { Code: 'None' };

export const CONFLICT_REASON: CancellationReason = { Code: 'TransactionConflict', Message: 'Transaction is ongoing for the item.' };

/** The message the TransactWriteItems reference gives for writes throttled on an on-demand table. */
export const THROTTLING_REASON: CancellationReason = {
  Code: 'ThrottlingError',
  Message:
    'Throughput exceeds the current capacity of your table or index. DynamoDB is automatically scaling your table or index so please try ' +
    'again shortly. If exceptions persist, check if you have a hot key: ' +
    'https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/bp-partition-key-design.html.',
};

export const transactionCanceled = (reasons: readonly CancellationReason[]): Refusal => ({
  status: 400,
  body: {
    __type: `${EXCEPTION_TYPE_PREFIX}TransactionCanceledException`,
    CancellationReasons: reasons,
    Message: `Transaction cancelled, please refer cancellation reasons for specific reasons [${reasons.map(({ Code }) => Code).join(', ')}]`,
  },
});

export const transactionConflict = (): Refusal => ({
  status: 400,
  body: {
    __type: `${EXCEPTION_TYPE_PREFIX}TransactionConflictException`,
    message: 'Operation was rejected because there is an ongoing transaction for the item.',
  },
});

/** A transaction sent again with the token of one still in flight: the SDK retries it, as throttling. */
export const transactionInProgress = (): Refusal => ({
  status: 400,
  body: {
    __type: `${EXCEPTION_TYPE_PREFIX}TransactionInProgressException`,
    Message: 'The transaction with the given request token is already in progress.',
  },
});

/** On an on-demand table, a write past its partition's throughput: the reason names the limit and the table. */
export const writeThrottled = (tableArn: string): Refusal => ({
  status: 400,
  body: {
    __type: `${EXCEPTION_TYPE_PREFIX}ThrottlingException`,
    message: 'Rate of requests exceeds the allowed throughput.',
    throttlingReasons: [{ reason: 'TableWriteKeyRangeThroughputExceeded', resource: tableArn }],
  },
});
