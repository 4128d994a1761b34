/**
 * What every route's answers are made of (docs/openapi.json): the shape of an operation and of an
 * answer, the headers, and the answers that come before a route's own: API Gateway's and the local
 * server's, and those of bad path parameters, queries and bodies, each as errors.ts's one mapping
 * (`toErrorResponse`) makes it, so that the document cannot drift from the handlers.
 */
import type * as z from 'zod/mini';
import {
  StoreUnavailable,
} from '../../domain/errors';
import {
  BodyTooLarge,
  InvalidPathParameters,
  InvalidQueryParameters,
  InvalidRequestBody,
  InvalidUtf8Body,
  UnsupportedMediaType,
  toErrorResponse,
} from '../../functions/http/errors';
import { OPENAPI_DOCUMENT_CACHE_CONTROL } from '../../functions/http/openapi-document';
import { MAX_BODY_BYTES } from '../../functions/http/route';
import type { AllocationsRouteKey, BatchesRouteKey } from '../../functions/http/route-keys';
import { noQuerySchema, pathParametersSchema } from '../../functions/http/schemas';
import { type ComponentName, type JsonSchema, type QuerySchema, type RequestBodyName, requestBodySchemas, schemaRef } from './components';

export type RouteKey = BatchesRouteKey | AllocationsRouteKey;

export const JSON_MEDIA_TYPE = 'application/json';

/** One answer a route can give, and when. */
export interface Answer {
  readonly status: number;
  /** Markdown, from docs/api.md. */
  readonly when: string;
  /** The example's name: where the service answers, the outcome its request log records. */
  readonly name: string;
  /** None for a 204. */
  readonly body?: { readonly mediaType: string; readonly schema: JsonSchema; readonly example: unknown };
  /** Each header it carries, with the value of the example. */
  readonly headers?: Readonly<Record<string, string>>;
}

export interface Operation {
  readonly operationId: string;
  readonly summary: string;
  readonly description: string;
  readonly requestBody?: {
    readonly schema: RequestBodyName;
    readonly example: unknown;
    /** A body that breaks a bound: the example of its 400. */
    readonly refused: unknown;
  };
  /** The example of each path parameter. */
  readonly pathParameters?: Readonly<Record<string, string>>;
  /**
   * The query parameters the route takes: the schema its handler checks them with, what each says,
   * with its example, and a query that breaks a rule (the example of its 400).
   */
  readonly query?: {
    readonly schema: QuerySchema;
    readonly parameters: Readonly<Record<string, { readonly description: string; readonly example: string }>>;
    readonly refused: Readonly<Record<string, string>>;
  };
  /** Its successes and its own refusals; those of every route are added to them. */
  readonly answers: readonly Answer[];
  /** Its answers when it fails, for a route that never calls the store; otherwise the store's (`failureAnswers`). */
  readonly failures?: readonly Answer[];
}

/** Headers the answers carry, as the document describes them. */
export const HEADERS: Readonly<Record<string, { readonly description: string; readonly schema: JsonSchema }>> = {
  'Retry-After': { description: 'Seconds to wait before repeating the same request.', schema: { type: 'integer', minimum: 0 } },
  Allow: { description: 'The methods the path takes.', schema: { type: 'string', pattern: '^[A-Z]+(, [A-Z]+)*$' } },
  'Cache-Control': {
    description: 'The document changes with each deploy, under the same URL: a copy may be kept, but must be fetched again before it is used.',
    schema: { type: 'string', const: OPENAPI_DOCUMENT_CACHE_CONTROL },
  },
};

const EXAMPLE_REQUEST_ID = 'JKJaXmPLvHcESHA=';

export const json = (name: ComponentName, example: unknown) => ({ mediaType: JSON_MEDIA_TYPE, schema: schemaRef(name), example });

/** What the mapping answers for `error`, named by the outcome it logs. */
/** An error's answer as the handlers give it, its example named for the error, or `name` where two of one status share an error. */
export const mapped = (when: string, error: unknown, schema: ComponentName = 'Error', name?: string): Answer => {
  const { statusCode, body, headers, outcome } = toErrorResponse(error, EXAMPLE_REQUEST_ID);
  return { status: statusCode, when, name: name ?? outcome, body: json(schema, body), ...(headers ? { headers } : {}) };
};

export const issuesOf = (schema: z.ZodMiniType, refused: unknown) => {
  const parsed = schema.safeParse(refused);
  if (parsed.success) throw new Error(`The example of a refused input is accepted: ${JSON.stringify(refused)}`);
  return parsed.error.issues;
};

/** As @middy/http-json-body-parser throws it for a body that does not parse. */
const malformedJson = new Error('Invalid or malformed JSON was provided', { cause: { package: '@middy/http-json-body-parser' } });

export const pathParameterAnswers = (names: readonly string[]): Answer[] =>
  names.length === 0
    ? []
    : [
        mapped(
          'A path parameter breaks a rule of what it names (an identifier, or a location id): one issue per bad parameter, ' +
            'named by its name, for the first rule it breaks. Checked before anything of the body is read',
          new InvalidPathParameters(issuesOf(pathParametersSchema(names), { ...Object.fromEntries(names.map((name) => [name, 'x'])), [names[0] ?? '']: ' ' })),
          'InvalidPathParameters',
        ),
      ];

/** The path parameters' refusal's schema serves the query's too: the same shape, `Invalid request`, one issue per parameter. */
export const queryAnswers = ({ schema, refused }: NonNullable<Operation['query']>): Answer[] => [
  mapped(
    'A query parameter breaks a rule of what it names, or the route does not take it: one issue per parameter, named ' +
      'by its name. A name sent twice is one value, the two joined by a comma (as API Gateway passes them), which no ' +
      'parameter takes',
    new InvalidQueryParameters(issuesOf(schema, refused)),
    'InvalidPathParameters',
  ),
];

/** A route that takes no query parameter refuses any. */
export const noQueryAnswers = (): Answer[] => [
  mapped(
    'The route takes no query parameter: each one sent is refused, one issue per parameter, named by its name',
    new InvalidQueryParameters(issuesOf(noQuerySchema, { page: '2' })),
    'InvalidPathParameters',
  ),
];

/** In the order the chain checks them. */
export const bodyAnswers = (name: RequestBodyName, refused: unknown): Answer[] => [
  mapped(
    'The `Content-Type` is missing, not JSON, names a `charset` other than `utf-8`, or was sent twice (API Gateway joins ' +
      'the two with a comma); checked before the body is read, so a 2 MB `text/plain` body gets 415, not 413',
    new UnsupportedMediaType(),
  ),
  mapped(`The body is over ${MAX_BODY_BYTES / 1024} KiB`, new BodyTooLarge(MAX_BODY_BYTES)),
  mapped("The body's bytes are not valid UTF-8: refused, never repaired; nothing is written", new InvalidUtf8Body()),
  mapped('The body is not valid JSON or is missing (a leading byte order mark counts as not JSON)', malformedJson),
  mapped(
    'A field is missing, of the wrong type, or out of bounds, an identifier breaks a rule, or the route does not take a ' +
      'field sent: one issue per field, for the first rule it breaks; `path` is `""` when the body is not an object',
    new InvalidRequestBody(issuesOf(requestBodySchemas[name], refused)),
    'InvalidRequestBody',
  ),
];

/** What API Gateway or the local server may answer for any route before its function runs; `allowed` is the methods its path takes. */
export const answersBeforeTheFunction = (allowed: readonly string[]): Answer[] => [
  {
    status: 403,
    when:
      'On AWS, when the routes require IAM authorization (the default): the request is unsigned, or its principal is not ' +
      'allowed `execute-api:Invoke` on the route. API Gateway answers; no function runs',
    name: 'Forbidden',
    body: json('GatewayError', { message: 'Forbidden' }),
  },
  {
    status: 404,
    when:
      'No route matches the path as sent: `/allocate/`, `//allocate`, `/./allocate` and `/x/../allocate` are 404, and a ' +
      '`{param}` matches one whole, non-empty segment (`/batches/` is 404). On AWS, also a known path with another method. ' +
      'API Gateway answers (the local server as it would); no function runs',
    name: 'RouteNotFound',
    body: json('GatewayError', { message: 'Not Found' }),
  },
  {
    status: 400,
    when:
      'The local server (`npm start`) only: a path parameter does not percent-decode (`/batches/%FF`), or the request has ' +
      "two `Host` headers (RFC 9112); no function runs. API Gateway's answer to either is not documented",
    name: 'BadRequest',
    body: json('GatewayError', { message: 'Bad Request' }),
  },
  {
    status: 405,
    when: 'The local server (`npm start`) only: a known path with another method; `Allow` lists the methods it takes. API Gateway answers 404',
    name: 'MethodNotAllowed',
    body: json('GatewayError', { message: 'Method Not Allowed' }),
    headers: { Allow: allowed.join(', ') },
  },
  {
    status: 413,
    when:
      'The request, as the event Lambda would receive (the body, base64 when it is not UTF-8, with the headers and request ' +
      'context), is over 6 MiB: API Gateway answers before any function runs, and so does the local server',
    name: 'RequestEntityTooLarge',
    body: json('GatewayError', { message: 'Request Entity Too Large' }),
  },
  {
    status: 429,
    when: "On AWS: past the stage's throttling (by default 100 requests/s, bursts of 200)",
    name: 'TooManyRequests',
    body: json('GatewayError', { message: 'Too Many Requests' }),
  },
];

/** API Gateway's answer, or the local server's, when the function fails instead of answering. */
export const functionError: Answer = {
  status: 500,
  when: 'The function failed instead of answering: API Gateway (or the local server) answers, with no request id',
  name: 'FunctionError',
  body: json('InternalError', { message: 'Internal Server Error' }),
};

/** What any route that calls the store answers when the store, or anything else, fails. */
export const failureAnswers = (): Answer[] => [
  mapped(
    "The store is unreachable, too slow for the function's time budget, or throttling past the retries, or an allocation " +
      'kept losing the race for stock, or a batch, a hold or a location kept changing under a write; nothing was half-written (a ' +
      'PATCH may have written its qty and some moves, each whole), and repeating the request is safe',
    new StoreUnavailable('example'),
    'Unavailable',
  ),
  mapped('Anything else: never a stack trace or a store error text', new Error('example'), 'InternalError'),
  functionError,
];
