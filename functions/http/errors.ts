import type * as z from 'zod/mini';
import {
  AdjustmentExists,
  BatchNotFound,
  DOMAIN_ERROR_CODES,
  DomainError,
  DuplicateBatch,
  ImportExists,
  ImportNotFound,
  HoldConflict,
  HoldNotFound,
  HoldNotPlaced,
  InvalidSku,
  LineAlreadyAllocated,
  LineNotFound,
  LineShipped,
  LineRoutedOtherwise,
  LineSplitOtherwise,
  LocationNotFound,
  OrderLinesAlreadyAllocated,
  OrderLinesRoutedOtherwise,
  OrderLinesSplitOtherwise,
  TooManyParts,
  OrderNotAllocated,
  OrderNotFound,
  OutOfStock,
  QtyChanged,
  RefusedField,
  ShipmentExists,
  ShipmentNotFound,
  ShipmentTooLarge,
  StaleCount,
  TooFewUnshipped,
  TransferConflict,
  TransferNotFound,
  TransferNotInStock,
  TransientFailure,
  UnknownSku,
} from '../../domain/errors';

/** Input that failed its schema: each issue names the field, or the path parameter, and what is wrong with it. */
abstract class InvalidInput extends Error {
  abstract override readonly name: string;
  constructor(
    message: string,
    readonly issues: readonly z.core.$ZodIssue[],
    /** What an unknown key of this input is not: "a field", "a query parameter". */
    readonly keyKind: string,
  ) {
    super(message);
  }
}

const INVALID_REQUEST_BODY = 'Invalid request body';

export class InvalidRequestBody extends InvalidInput {
  override readonly name = 'InvalidRequestBody';
  constructor(issues: readonly z.core.$ZodIssue[]) {
    super(INVALID_REQUEST_BODY, issues, 'a field');
  }
}

/** A path parameter breaks the rules of the id it stands for; the request is refused before its body is read. */
export class InvalidPathParameters extends InvalidInput {
  override readonly name = 'InvalidPathParameters';
  constructor(issues: readonly z.core.$ZodIssue[]) {
    super('Invalid request', issues, 'a path parameter');
  }
}

/** A query parameter breaks the rules of what it names, or the route takes no such parameter; the request is refused before its body is read. */
export class InvalidQueryParameters extends InvalidInput {
  override readonly name = 'InvalidQueryParameters';
  constructor(issues: readonly z.core.$ZodIssue[]) {
    super('Invalid request', issues, 'a query parameter');
  }
}

/** A route key the handler has no route for: API Gateway sends none, but a misrouted event must not reach a service. */
export class RouteNotFound extends Error {
  override readonly name = 'RouteNotFound';
  constructor() {
    super('Not Found');
  }
}

export class BodyTooLarge extends Error {
  override readonly name = 'BodyTooLarge';
  constructor(limitBytes: number) {
    super(`Request body is larger than ${limitBytes} bytes`);
  }
}

/** The Content-Type is missing or not a JSON media type. */
export class UnsupportedMediaType extends Error {
  override readonly name: string = 'UnsupportedMediaType';
  constructor() {
    super('Content-Type must be application/json');
  }
}

/** A JSON media type declared in a charset other than UTF-8, the only one JSON allows (RFC 8259). */
export class UnsupportedCharset extends UnsupportedMediaType {
  override readonly name = 'UnsupportedCharset';
}

/** Bytes that are not UTF-8: refused, since repairing them would make different bodies equal. */
export class InvalidUtf8Body extends Error {
  override readonly name = 'InvalidUtf8Body';
  constructor() {
    super('Request body is not valid UTF-8');
  }
}

/**
 * Every error body's `code` (docs/api.md, "Error codes"): the domain's refusals, and what the HTTP
 * edge refuses or cannot answer itself. Built when read, so that the handlers' bundles, which only
 * name its type, leave it out (table.ts, tableAccess, says why).
 */
export const ERROR_CODES = /* @__PURE__ */ (() => [...DOMAIN_ERROR_CODES, 'malformed_json', 'unsupported_media_type', 'body_too_large', 'unavailable', 'internal_error'] as const)();
export type ErrorCode = (typeof ERROR_CODES)[number];

export interface ErrorResponse {
  readonly statusCode: number;
  readonly body: Record<string, unknown>;
  readonly headers?: Record<string, string>;
  /** What the request came to, for the request log: the error's name. */
  readonly outcome: string;
}

/** Seconds a client should wait before retrying when the store is unavailable. */
const RETRY_AFTER_SECONDS = 1;

const DOMAIN_ERROR_STATUS = new Map<Function, number>([
  [InvalidSku, 400],
  [OutOfStock, 400],
  [DuplicateBatch, 409],
  [ImportExists, 409],
  [LineAlreadyAllocated, 409],
  [LineRoutedOtherwise, 409],
  [LineSplitOtherwise, 409],
  [OrderNotAllocated, 400],
  [OrderLinesAlreadyAllocated, 409],
  [OrderLinesRoutedOtherwise, 409],
  [OrderLinesSplitOtherwise, 409],
  [TooManyParts, 400],
  [BatchNotFound, 404],
  [ImportNotFound, 404],
  [OrderNotFound, 404],
  [LineNotFound, 404],
  [UnknownSku, 404],
  [HoldNotFound, 404],
  [HoldNotPlaced, 400],
  [HoldConflict, 409],
  [LocationNotFound, 404],
  [TransferNotInStock, 400],
  [TransferNotFound, 404],
  [TransferConflict, 409],
  [ShipmentExists, 409],
  [ShipmentNotFound, 404],
  [ShipmentTooLarge, 400],
  [TooFewUnshipped, 409],
  [LineShipped, 409],
  [AdjustmentExists, 409],
  [QtyChanged, 409],
  [StaleCount, 409],
]);

/**
 * @middy/http-json-body-parser v6 throws malformed JSON as 415. Its other error, for the
 * Content-Type, cannot arise: route.ts checks the media type before the body size, and hands the
 * parser one it accepts.
 */
const MIDDY_BODY_PARSER = '@middy/http-json-body-parser';
const MIDDY_MALFORMED_JSON = 'Invalid or malformed JSON was provided';

/** middy gives up shortly before Lambda's own timeout, so that the response can still be sent. */
const MIDDY_CORE = '@middy/core';
const MIDDY_TIMEOUT = 'TimeoutError';

interface MiddyError {
  name?: string;
  message?: string;
  cause?: { package?: string };
}

const unavailable = (requestId: string, outcome: string): ErrorResponse => ({
  statusCode: 503,
  body: { message: 'The service is briefly unavailable; retry the request', code: 'unavailable' satisfies ErrorCode, request_id: requestId },
  headers: { 'Retry-After': String(RETRY_AFTER_SECONDS) },
  outcome,
});

/**
 * Each field's first issue, its message led by the field's name (`lines.3.sku`, or "the body" for
 * the body itself), so that it reads whole wherever it is shown. zod may raise several issues for
 * one value (1e26 is past the safe integers and past the bound); the client gets one per field, as
 * docs/api.md promises.
 */
const oneIssuePerField = ({ issues, keyKind }: InvalidInput): { path: string; message: string }[] => {
  const messages = new Map<string, string>();
  const add = (path: string, message: string) => {
    if (!messages.has(path)) messages.set(path, `${path === '' ? 'the body' : path} ${message}`);
  };
  for (const issue of issues) {
    // A key the route does not take, named on its own: a misspelled field beside the right ones.
    // One that is empty or holds a dot is quoted, so that it reads as no other path.
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) add([...issue.path, key === '' || key.includes('.') ? JSON.stringify(key) : key].join('.'), `is not ${keyKind} of this route`);
    }
    else add(issue.path.join('.'), issue.message);
  }
  return [...messages].map(([path, message]) => ({ path, message }));
};

/**
 * The one place that decides what every error looks like over HTTP, for every handler. Only the
 * messages written for clients leave this function: an unexpected error answers a generic message
 * and the request id, never its own text.
 */
export const toErrorResponse = (error: unknown, requestId: string): ErrorResponse => {
  // A field the schema accepted but the store refused: answered as the schema's refusals are, one issue naming the field.
  if (error instanceof RefusedField) {
    return { statusCode: 400, body: { message: INVALID_REQUEST_BODY, code: error.code, issues: [{ path: error.field, message: error.message }] }, outcome: error.name };
  }
  if (error instanceof DomainError) {
    // An order's refusal names every line it is about, so a client can fix them all at once.
    const lines =
      error instanceof OrderNotAllocated ||
      error instanceof OrderLinesAlreadyAllocated ||
      error instanceof OrderLinesRoutedOtherwise ||
      error instanceof OrderLinesSplitOtherwise ||
      error instanceof HoldNotPlaced
        ? { lines: error.lines }
        : {};
    // A line's refusal says why, as each line of an order's does.
    const reason = error instanceof OutOfStock ? { reason: error.reason } : {};
    // A shipment refused names the place and each line short there, with the units it has there.
    const short = error instanceof TooFewUnshipped ? { location: error.location, lines: error.lines } : {};
    // A compare and set refused says what the batch has, for the caller to read it and decide again.
    const current = error instanceof QtyChanged ? { qty: error.qty } : {};
    return { statusCode: DOMAIN_ERROR_STATUS.get(error.constructor) ?? 400, body: { message: error.message, code: error.code, ...lines, ...reason, ...short, ...current }, outcome: error.name };
  }
  if (error instanceof InvalidInput) {
    return { statusCode: 400, body: { message: error.message, code: 'validation_failed' satisfies ErrorCode, issues: oneIssuePerField(error) }, outcome: error.name };
  }
  const refused = (statusCode: number, code: ErrorCode, { message, name }: Error): ErrorResponse => ({ statusCode, body: { message, code }, outcome: name });
  // As API Gateway answers a route it has not: it never sends such an event to a function.
  if (error instanceof RouteNotFound) return { statusCode: 404, body: { message: error.message }, outcome: error.name };
  if (error instanceof UnsupportedMediaType) return refused(415, 'unsupported_media_type', error);
  if (error instanceof BodyTooLarge) return refused(413, 'body_too_large', error);
  if (error instanceof InvalidUtf8Body) return refused(400, 'malformed_json', error);
  if (error instanceof TransientFailure) return unavailable(requestId, error.name);
  const middyError = error as MiddyError;
  // A store too slow for the function's time: each write is one transaction, so a retry is safe.
  if (middyError.cause?.package === MIDDY_CORE && middyError.name === MIDDY_TIMEOUT) {
    return unavailable(requestId, 'FunctionTimeout');
  }
  if (middyError.cause?.package === MIDDY_BODY_PARSER && middyError.message === MIDDY_MALFORMED_JSON) {
    return { statusCode: 400, body: { message: 'Request body is not valid JSON', code: 'malformed_json' satisfies ErrorCode }, outcome: 'MalformedJson' };
  }
  return { statusCode: 500, body: { message: 'Internal server error', code: 'internal_error' satisfies ErrorCode, request_id: requestId }, outcome: 'InternalError' };
};
