import type { Context } from 'aws-lambda';
import { createAllocationsHandler } from '../../functions/allocations';
import { createBatchesHandler } from '../../functions/batches';
import type { HttpEvent, HttpResult } from '../../functions/http/route';
import { routeKeys, splitRouteKey } from '../../functions/http/route-keys';
import type { DynamoDbBatchRepository } from '../../functions/store/batch-repository';
import { type ImportStepResult, type ImportWorkerEvent, createImportWorker } from '../../functions/import-worker';
import { UPLOAD_HEADERS, UPLOAD_SECONDS, type UploadTarget } from '../../functions/imports/uploads';
import { createSweepHoldsHandler } from '../../functions/sweep-holds';

/*
 * The functions of a run, as they are deployed: the two HTTP handlers, the sweeper and the import worker, each
 * instance over a repository of its own. In the Lambda mode each instance is one function's and
 * serves one request at a time, and a new one starts, with memory of its own, when all of its
 * function's are busy; in the shared mode one process serves them
 * all at once (the local server's mode, with takes grouped). An instance that dies takes its
 * requests with it, and the next request starts a new one.
 */

export type Mode = 'lambda' | 'shared';

/** The deployed functions: the two HTTP handlers, grouped by resource, the hold sweeper and the import worker. */
export type FunctionName = 'batches' | 'allocations' | 'sweeper' | 'importWorker';

export const functionOf = (routeKey: string): FunctionName => ((routeKeys.batches as readonly string[]).includes(routeKey) ? 'batches' : 'allocations');

export interface Instance {
  readonly number: number;
  /** The function it is an instance of; in the shared mode, one process serves them all. */
  readonly function: FunctionName | 'all';
  readonly http: (event: HttpEvent, context: Context) => Promise<HttpResult>;
  readonly sweep: (context: Context) => Promise<unknown>;
  /** One step of the engine of imports. */
  readonly importStep: (event: ImportWorkerEvent, context: Context) => Promise<ImportStepResult>;
  /** What takes that the run does not send make of a batch by meeting there: a spread. */
  readonly spread: (ref: string, sku: string) => Promise<void>;
  /** The requests it serves now. */
  readonly serving: Set<string>;
  /** Every request it has served: work one of them left running (a call sent beside its answer, a grouped take) dies with it. */
  readonly served: Set<string>;
}

/** Long enough that no deadline of the code's own passes in a run: time runs out only where a fault says. */
const REMAINING_MS = 3_600_000;

export const contextOf = (actor: string): Context =>
  ({ awsRequestId: actor, functionName: 'simulated', getRemainingTimeInMillis: () => REMAINING_MS }) as unknown as Context;

const noDocument = async () => {
  throw new Error('The simulator reads no OpenAPI document');
};

/** Where a run's clients send an import's file: the run's engine of imports (./import-engine.ts) stands in for the bucket and its notice. */
const simulatedUploads: UploadTarget = async (importid, now) => ({
  url: `https://feeds.simulated/${encodeURIComponent(importid)}`,
  method: 'PUT',
  headers: UPLOAD_HEADERS,
  expiresAt: new Date(now + UPLOAD_SECONDS * 1000).toISOString(),
});

export class Functions {
  private readonly live: Instance[] = [];
  private started = 0;

  constructor(
    readonly mode: Mode,
    private readonly newRepository: () => DynamoDbBatchRepository,
  ) {}

  /** The instance of `name` that serves `actor`'s request: a free one, else a new one. */
  enter(actor: string, name: FunctionName): Instance {
    const instance =
      (this.mode === 'shared' ? this.live[0] : this.live.find((candidate) => candidate.function === name && candidate.serving.size === 0)) ??
      this.start(this.mode === 'shared' ? 'all' : name);
    instance.serving.add(actor);
    instance.served.add(actor);
    return instance;
  }

  leave(instance: Instance, actor: string): void {
    instance.serving.delete(actor);
  }

  /** The instance dies, and everything it was running with it: the requests it was serving, and what they left running. */
  die(instance: Instance): { readonly unanswered: string[]; readonly stopped: string[] } {
    this.live.splice(this.live.indexOf(instance), 1);
    const unanswered = [...instance.serving];
    instance.serving.clear();
    return { unanswered, stopped: [...instance.served] };
  }

  /** The instance serving `actor` now. */
  of(actor: string): Instance | undefined {
    return this.live.find(({ serving }) => serving.has(actor));
  }

  /** The live instance that served `actor`, which may have answered while its work runs on. */
  ran(actor: string): Instance | undefined {
    return this.live.find(({ served }) => served.has(actor));
  }

  private start(name: FunctionName | 'all'): Instance {
    const repository = this.newRepository();
    const allocations = createAllocationsHandler(repository, noDocument);
    const batches = createBatchesHandler(repository, simulatedUploads);
    const sweeper = createSweepHoldsHandler(repository);
    const importWorker = createImportWorker(repository);
    const instance: Instance = {
      number: ++this.started,
      function: name,
      http: (event, context) => (functionOf(event.routeKey) === 'batches' ? batches : allocations)(event, context),
      sweep: (context) => sweeper(undefined, context),
      importStep: (event, context) => importWorker(event, context),
      spread: (ref, sku) => repository.spreadBatch(ref, sku),
      serving: new Set(),
      served: new Set(),
    };
    this.live.push(instance);
    return instance;
  }
}

/** An API Gateway (payload 2.0) event for a route, as the HTTP API sends it; its request id the actor's. */
export const httpEvent = (
  routeKey: string,
  pathParameters: Readonly<Record<string, string>> | undefined,
  body: unknown,
  actor: string,
  query?: Readonly<Record<string, string>>,
): HttpEvent => {
  const { method, path: template } = splitRouteKey(routeKey);
  const path = template.replace(/\{([^}]+)\}/g, (_, name: string) => encodeURIComponent(pathParameters?.[name] ?? ''));
  return {
    version: '2.0',
    routeKey,
    rawPath: path,
    rawQueryString: query ? new URLSearchParams(query).toString() : '',
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    ...(pathParameters ? { pathParameters: { ...pathParameters } } : {}),
    ...(query ? { queryStringParameters: { ...query } } : {}),
    requestContext: {
      accountId: '000000000000',
      apiId: 'simulated',
      domainName: 'simulated',
      domainPrefix: 'simulated',
      http: { method, path, protocol: 'HTTP/1.1', sourceIp: '127.0.0.1', userAgent: 'simulator' },
      requestId: actor,
      routeKey,
      stage: '$default',
      time: '01/Jun/2026:00:00:00 +0000',
      timeEpoch: 0,
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    isBase64Encoded: false,
  };
};
