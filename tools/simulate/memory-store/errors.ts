/*
 * The two ways a call fails here. A DynamoDbError is an answer DynamoDB Local gives (HTTP 400, its
 * `__type` and wording, found by sending it the same calls), which the SDK turns into its own
 * exception classes. Unsupported is a call this store was not built for: it is thrown rather than
 * answered, so that the run stops there instead of going on with an answer DynamoDB Local might
 * not give.
 */

const DYNAMODB = 'com.amazonaws.dynamodb.v20120810#';
/** DynamoDB Local names its validation errors after the framework that raises them. */
const VALIDATION = 'com.amazon.coral.validate#ValidationException';

export class DynamoDbError extends Error {
  constructor(
    readonly type: string,
    message: string,
    /** Fields the answer carries beside its type and message: a failed condition's item, a cancellation's reasons. */
    readonly fields: Readonly<Record<string, unknown>> = {},
  ) {
    super(message);
  }

  get body(): Record<string, unknown> {
    return { __type: this.type, Message: this.message, ...this.fields };
  }
}

export class Unsupported extends Error {
  override readonly name = 'Unsupported';

  constructor(what: string) {
    super(`The memory store does not support ${what}`);
  }
}

export const validation = (message: string) => new DynamoDbError(VALIDATION, message);

export const tableNotFound = () => new DynamoDbError(`${DYNAMODB}ResourceNotFoundException`, 'Cannot do operations on a non-existent table');

export const tableInUse = () => new DynamoDbError(`${DYNAMODB}ResourceInUseException`, 'Cannot create preexisting table');

export const CONDITION_FAILED_MESSAGE = 'The conditional request failed';
/** DynamoDB Local words a transaction's failed ConditionCheck with a full stop; its other failed conditions without. */
export const CHECK_FAILED_MESSAGE = 'The conditional request failed.';

export const conditionFailed = (item: Readonly<Record<string, unknown>> | undefined) =>
  new DynamoDbError(`${DYNAMODB}ConditionalCheckFailedException`, CONDITION_FAILED_MESSAGE, item ? { Item: item } : {});

export interface CancellationReason {
  readonly Code: string;
  readonly Message?: string;
  readonly Item?: Readonly<Record<string, unknown>>;
}

export const transactionCanceled = (reasons: readonly CancellationReason[]) =>
  new DynamoDbError(
    `${DYNAMODB}TransactionCanceledException`,
    `Transaction cancelled, please refer cancellation reasons for specific reasons [${reasons.map(({ Code }) => Code).join(', ')}]`,
    { CancellationReasons: reasons },
  );
