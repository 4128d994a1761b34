import type { HttpHandler } from '@smithy/core/protocols';
import type { HttpHandlerOptions, HttpRequest, HttpResponse } from '@smithy/types';

/** A request as the model reads it, whether it came over HTTP or from a client in this process. */
export interface ModelRequest {
  readonly method: string;
  readonly path: string;
  /** By lower-case name. */
  readonly headers: Readonly<Record<string, string>>;
  readonly body: Buffer;
}

export interface ModelAnswer {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: Buffer;
}

/** An SDK request handler for clients in the model's own process, bounded by the client's request timeout as its HTTP handler would be. */
export type InProcessHandler = (requestTimeoutMs: number) => HttpHandler<Record<string, never>>;

/*
 * The errors are those the SDK's Node HTTP handler raises (@smithy/node-http-handler), by name and
 * code, so that the SDK's retries and the adapter's reading of them (functions/store/store-errors.ts)
 * see no difference: a call past its timeout is sent again, an aborted one is not.
 */
const abortError = () => Object.assign(new Error('Request aborted'), { name: 'AbortError' });
const timeoutError = (ms: number) =>
  Object.assign(new Error(`a request has exceeded the configured ${ms} ms requestTimeout.`), { name: 'TimeoutError', code: 'ETIMEDOUT' });
const connectionDropped = () => Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' });

const lowerCased = (headers: HttpRequest['headers']): Record<string, string> =>
  Object.fromEntries(Object.entries(headers).map(([name, value]) => [name.toLowerCase(), value]));

/** DynamoDB's JSON protocol sends its body as one string. */
const bodyOf = (body: unknown): Buffer => (body === undefined ? Buffer.alloc(0) : Buffer.from(body as string | Uint8Array));

/**
 * Hands the SDK's request to `answer` and its answer back, as the HTTP server would, without the two
 * sockets, parsers and writes between: about a sixth of `npm start`'s CPU under a hot SKU's load
 * (docs/conflict-model.md). A client that gives up (its abort signal, or the timeout) leaves the model's work to
 * finish, as a dropped connection does: a write it forwarded is done all the same.
 */
export const inProcessHandler =
  (answer: (request: ModelRequest) => Promise<ModelAnswer | undefined>): InProcessHandler =>
  (requestTimeoutMs) => ({
    handle: (request: HttpRequest, { abortSignal }: HttpHandlerOptions = {}) =>
      new Promise<{ response: HttpResponse }>((resolve, reject) => {
        if (abortSignal?.aborted) return reject(abortError());
        let settled = false;
        const settle = (then: () => void) => {
          if (settled) return;
          settled = true;
          clearTimeout(timer);
          (abortSignal as AbortSignal | undefined)?.removeEventListener?.('abort', onAbort);
          then();
        };
        const onAbort = () => settle(() => reject(abortError()));
        const timer = setTimeout(() => settle(() => reject(timeoutError(requestTimeoutMs))), requestTimeoutMs);
        (abortSignal as AbortSignal | undefined)?.addEventListener?.('abort', onAbort);
        answer({ method: request.method, path: request.path, headers: lowerCased(request.headers), body: bodyOf(request.body) }).then(
          (answered) =>
            settle(() =>
              answered ? resolve({ response: { statusCode: answered.status, headers: { ...answered.headers }, body: answered.body } }) : reject(connectionDropped()),
            ),
          (error: unknown) => settle(() => reject(error)),
        );
      }),
    updateHttpClientConfig: () => undefined,
    httpHandlerConfigs: () => ({}),
  });
