import type * as z from 'zod/mini';
import { DomainError, DuplicateBatch, InvalidSku, LineAlreadyAllocated, OutOfStock, TransientFailure } from '../../domain/errors';

/** The body failed the schema: each issue names the field and what is wrong with it. */
export class InvalidRequestBody extends Error {
  override readonly name = 'InvalidRequestBody';
  constructor(readonly issues: readonly z.core.$ZodIssue[]) {
    super('Invalid request body');
  }
}

export class BodyTooLarge extends Error {
  override readonly name = 'BodyTooLarge';
  constructor(limitBytes: number) {
    super(`Request body is larger than ${limitBytes} bytes`);
  }
}

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
  [LineAlreadyAllocated, 409],
]);

/** @middy/http-json-body-parser v6 throws both of its errors as 415; only the content type is one. */
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
  body: { message: 'The service is briefly unavailable; retry the request', requestId },
  headers: { 'Retry-After': String(RETRY_AFTER_SECONDS) },
  outcome,
});

/**
 * The one place that decides what every error looks like over HTTP, for every handler. Only the
 * messages written for clients leave this function: an unexpected error answers a generic message
 * and the request id, never its own text.
 */
export const toErrorResponse = (error: unknown, requestId: string): ErrorResponse => {
  if (error instanceof DomainError) {
    return { statusCode: DOMAIN_ERROR_STATUS.get(error.constructor) ?? 400, body: { message: error.message }, outcome: error.name };
  }
  if (error instanceof InvalidRequestBody) {
    return {
      statusCode: 400,
      body: {
        message: error.message,
        issues: error.issues.map((issue) => ({ path: issue.path.join('.'), message: issue.message })),
      },
      outcome: error.name,
    };
  }
  if (error instanceof BodyTooLarge) return { statusCode: 413, body: { message: error.message }, outcome: error.name };
  if (error instanceof TransientFailure) return unavailable(requestId, error.name);
  const middyError = error as MiddyError;
  // A store too slow for the function's time: each write is one transaction, so a retry is safe.
  if (middyError.cause?.package === MIDDY_CORE && middyError.name === MIDDY_TIMEOUT) {
    return unavailable(requestId, 'FunctionTimeout');
  }
  if (middyError.cause?.package === MIDDY_BODY_PARSER) {
    return middyError.message === MIDDY_MALFORMED_JSON
      ? { statusCode: 400, body: { message: 'Request body is not valid JSON' }, outcome: 'MalformedJson' }
      : { statusCode: 415, body: { message: 'Content-Type must be application/json' }, outcome: 'UnsupportedMediaType' };
  }
  return { statusCode: 500, body: { message: 'Internal server error', requestId }, outcome: 'InternalError' };
};
