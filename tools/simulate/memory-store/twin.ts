import { setTimeout as sleep } from 'node:timers/promises';
import type { HttpHandler } from '@smithy/core/protocols';
import type { HttpHandlerOptions, HttpRequest, HttpResponse } from '@smithy/types';
import { createDynamoDbClient } from '../../../functions/store/client';
import { DYNAMODB_LOCAL_STREAM_LAG_MS, type StoreOfRecord } from '../store-of-record';
import { Catalog } from './catalog';
import { storeOfRecordThrough } from './index';
import { type Answer, answer, bodyOf, targetOf } from './request-handler';
import { comparable, comparableRecords, differences } from './twin-comparison';

/** How long a stream record DynamoDB Local has not yet released is waited for: far past its lag, which a loaded machine stretches. */
const MISSING_RECORD_WAIT_MS = 10_000;

/*
 * The conformance check: a store of record whose every call goes to DynamoDB Local and to a memory
 * store, one call at a time, in the same order. The two answers are compared (./twin-comparison.ts),
 * a difference is kept with both answers, and DynamoDB Local's answer is the one returned: the run
 * goes on as the store of record says. A table's stream is compared twice: record by record as the
 * run reads it (the memory store is asked for as many records as DynamoDB Local gave, since DynamoDB
 * Local keeps the latest back a while), and whole before the table is dropped, so that a record one
 * store made and the other did not is found even where the run stopped reading.
 *
 * The stream ARNs, shard ids and iterators of the two stores differ; the twin maps DynamoDB Local's
 * to the memory store's before it sends a call on.
 */

export interface Mismatch {
  readonly operation: string;
  readonly request: unknown;
  readonly local: { readonly status: number; readonly body: unknown };
  /** What the memory store answered, or why it refused to. */
  readonly memory: { readonly status: number; readonly body: unknown } | { readonly refused: string };
  readonly differences: readonly string[];
}

export interface TwinStoreOfRecord extends StoreOfRecord {
  /** Every difference found so far, in the order of the calls. */
  readonly mismatches: readonly Mismatch[];
}

type Json = Record<string, unknown>;

const operationOf = (target: string) => target.split('.')[1] ?? target;
const streamsTarget = (operation: string) => `DynamoDBStreams_20120810.${operation}`;

const parsed = (body: string): Json => (body === '' ? {} : (JSON.parse(body) as Json));

const textOf = async (body: unknown): Promise<string> => {
  const chunks: Buffer[] = [];
  for await (const chunk of body as AsyncIterable<Buffer>) chunks.push(Buffer.from(chunk));
  return Buffer.concat(chunks).toString('utf8');
};

export const twinStoreOfRecord = (endpoint: string): TwinStoreOfRecord => {
  // DynamoDB Local reached as the simulator's own client reaches it: the same HTTP handler, the same timeouts.
  const local = createDynamoDbClient(endpoint);
  const localHandler = local.config.requestHandler as { handle(request: HttpRequest, options?: HttpHandlerOptions): Promise<{ response: HttpResponse }> };
  const catalog = new Catalog(() => Date.now());
  const mismatches: Mismatch[] = [];
  const streamArns = new Map<string, string>();
  const shardIds = new Map<string, string>();
  const iterators = new Map<string, string>();
  const streamOfTable = new Map<string, string>();
  let queue: Promise<unknown> = Promise.resolve();

  const sendLocal = async (request: HttpRequest, options?: HttpHandlerOptions): Promise<Answer & { headers: Record<string, string> }> => {
    const { response } = await localHandler.handle(request, options);
    return { status: response.statusCode, headers: response.headers, body: await textOf(response.body) };
  };

  /** A call of the twin's own to DynamoDB Local, made from one of the run's (its endpoint and headers). */
  const askLocal = async (like: HttpRequest, target: string, input: Json): Promise<Json> => {
    const body = JSON.stringify(input);
    const kept = Object.entries(like.headers).filter(([name]) => !['x-amz-target', 'content-length'].includes(name.toLowerCase()));
    const headers = { ...Object.fromEntries(kept), 'x-amz-target': target, 'content-length': String(Buffer.byteLength(body)) };
    const { status, body: answered } = await sendLocal({ ...like, headers, body } as HttpRequest);
    if (status !== 200) throw new Error(`DynamoDB Local answered ${target} with ${status}: ${answered}`);
    return parsed(answered);
  };

  const askMemory = (target: string, input: Json): Json => {
    const { status, body } = answer(catalog, target, JSON.stringify(input));
    if (status !== 200) throw new Error(`The memory store answered ${target} with ${status}: ${body}`);
    return parsed(body);
  };

  const mismatch = (operation: string, request: unknown, localAnswer: Answer, memory: Mismatch['memory'], found: readonly string[]) =>
    mismatches.push({ operation, request, local: { status: localAnswer.status, body: parsed(localAnswer.body) }, memory, differences: found });

  /**
   * A stream read whole, from its start; DynamoDB Local's, which keeps its latest records back a
   * while, until it has as many as the memory store's: a record it lacks is waited for as long as
   * a loaded machine may keep one back, so only a real difference is reported, and only then does
   * the wait take that long.
   */
  const wholeStream = async (read: (operation: string, input: Json) => Promise<Json>, StreamArn: string, atLeast = 0): Promise<unknown[]> => {
    const { StreamDescription } = (await read('DescribeStream', { StreamArn })) as { StreamDescription: { Shards: { ShardId: string }[] } };
    const records: unknown[] = [];
    for (const { ShardId } of StreamDescription.Shards) {
      const started = (await read('GetShardIterator', { StreamArn, ShardId, ShardIteratorType: 'TRIM_HORIZON' })) as { ShardIterator?: string };
      let iterator = started.ShardIterator;
      let quietSince = performance.now();
      while (iterator) {
        const { Records = [], NextShardIterator } = (await read('GetRecords', { ShardIterator: iterator })) as { Records?: unknown[]; NextShardIterator?: string };
        records.push(...Records);
        iterator = NextShardIterator;
        if (Records.length > 0) quietSince = performance.now();
        else if (records.length >= atLeast || performance.now() - quietSince >= MISSING_RECORD_WAIT_MS) break;
        else await sleep(DYNAMODB_LOCAL_STREAM_LAG_MS / 2);
      }
    }
    return records;
  };

  /** Before a table is dropped: its two streams, whole, must be alike. */
  const compareStreams = async (like: HttpRequest, tableName: string) => {
    const localArn = streamOfTable.get(tableName);
    const memoryArn = localArn && streamArns.get(localArn);
    if (!localArn || !memoryArn) return;
    const memoryRecords = await wholeStream(async (operation, input) => askMemory(streamsTarget(operation), input), memoryArn);
    const localRecords = await wholeStream((operation, input) => askLocal(like, streamsTarget(operation), input), localArn, memoryRecords.length);
    const found = differences(comparableRecords(localRecords), comparableRecords(memoryRecords));
    if (found.length > 0) {
      mismatches.push({
        operation: 'the whole stream',
        request: { tableName },
        local: { status: 200, body: localRecords },
        memory: { status: 200, body: memoryRecords },
        differences: found,
      });
    }
    streamOfTable.delete(tableName);
    streamArns.delete(localArn);
  };

  /** The call as the memory store must get it: DynamoDB Local's stream ARN, shard and iterator turned into its own. */
  const forMemory = (operation: string, input: Json, localAnswer: Json): Json | string => {
    const missing = (what: string, value: unknown) => `no ${what} of the memory store stands for ${String(value)}`;
    switch (operation) {
      case 'DescribeStream': {
        const StreamArn = streamArns.get(String(input.StreamArn));
        return StreamArn ? { ...input, StreamArn } : missing('stream', input.StreamArn);
      }
      case 'GetShardIterator': {
        const [StreamArn, ShardId] = [streamArns.get(String(input.StreamArn)), shardIds.get(String(input.ShardId))];
        return StreamArn && ShardId ? { ...input, StreamArn, ShardId } : missing('stream and shard', `${input.StreamArn} ${input.ShardId}`);
      }
      case 'GetRecords': {
        const ShardIterator = iterators.get(String(input.ShardIterator));
        if (!ShardIterator) return missing('shard iterator', input.ShardIterator);
        // As many records as DynamoDB Local gave: it may keep the latest back a while.
        return { ...input, ShardIterator, Limit: ((localAnswer.Records as unknown[] | undefined) ?? []).length };
      }
      default:
        return input;
    }
  };

  /** What the two answers say of streams, kept for the calls that follow. */
  const learn = (operation: string, input: Json, localAnswer: Json, memoryAnswer: Json) => {
    const table = (localAnswer.TableDescription ?? localAnswer.Table) as Json | undefined;
    const memoryTable = (memoryAnswer.TableDescription ?? memoryAnswer.Table) as Json | undefined;
    if (operation !== 'DeleteTable' && typeof table?.LatestStreamArn === 'string' && typeof memoryTable?.LatestStreamArn === 'string') {
      streamArns.set(table.LatestStreamArn, memoryTable.LatestStreamArn);
      streamOfTable.set(String(table.TableName), table.LatestStreamArn);
    }
    if (operation === 'DescribeStream') {
      const shardsOf = (description: unknown) => ((description as { Shards?: { ShardId: string }[] } | undefined)?.Shards ?? []).map(({ ShardId }) => ShardId);
      const memoryShards = shardsOf(memoryAnswer.StreamDescription);
      shardsOf(localAnswer.StreamDescription).forEach((shard, index) => {
        if (memoryShards[index] !== undefined) shardIds.set(shard, memoryShards[index]);
      });
    }
    if (operation === 'GetShardIterator' && typeof localAnswer.ShardIterator === 'string' && typeof memoryAnswer.ShardIterator === 'string') {
      iterators.set(localAnswer.ShardIterator, memoryAnswer.ShardIterator);
    }
    if (operation === 'GetRecords' && typeof localAnswer.NextShardIterator === 'string') {
      const next = (localAnswer.Records as unknown[] | undefined)?.length ? memoryAnswer.NextShardIterator : iterators.get(String(input.ShardIterator));
      if (typeof next === 'string') iterators.set(localAnswer.NextShardIterator, next);
    }
    if (operation === 'GetRecords') iterators.delete(String(input.ShardIterator));
  };

  const twinned = async (request: HttpRequest, options?: HttpHandlerOptions) => {
    const target = targetOf(request);
    const operation = operationOf(target);
    const input = parsed(bodyOf(request));
    if (operation === 'DeleteTable') await compareStreams(request, String(input.TableName));
    const localAnswer = await sendLocal(request, options);
    const localBody = parsed(localAnswer.body);
    const memoryInput = forMemory(operation, input, localBody);
    const nothingToRead = operation === 'GetRecords' && typeof memoryInput !== 'string' && memoryInput.Limit === 0;
    if (typeof memoryInput === 'string') {
      mismatch(operation, input, localAnswer, { refused: memoryInput }, []);
    } else if (nothingToRead) {
      learn(operation, input, localBody, {});
    } else {
      try {
        const memoryAnswer = answer(catalog, target, JSON.stringify(memoryInput));
        const memoryBody = parsed(memoryAnswer.body);
        const found = differences(comparable(operation, localBody), comparable(operation, memoryBody));
        if (memoryAnswer.status !== localAnswer.status) found.unshift(`status: ${localAnswer.status}, and ${memoryAnswer.status}`);
        if (found.length > 0) mismatch(operation, input, localAnswer, { status: memoryAnswer.status, body: memoryBody }, found);
        learn(operation, input, localBody, memoryBody);
      } catch (error) {
        mismatch(operation, input, localAnswer, { refused: `${(error as Error).name}: ${(error as Error).message}` }, []);
      }
    }
    return { response: { statusCode: localAnswer.status, headers: localAnswer.headers, body: Buffer.from(localAnswer.body) } };
  };

  const handler: HttpHandler<Record<string, never>> = {
    // One call at a time, so that both stores see the calls in one order.
    handle: (request, options) => {
      const answered = queue.then(() => twinned(request, options));
      queue = answered.catch(() => undefined);
      return answered;
    },
    updateHttpClientConfig: () => undefined,
    httpHandlerConfigs: () => ({}),
  };

  const store = storeOfRecordThrough(handler, {
    endpoint,
    streamLagMs: DYNAMODB_LOCAL_STREAM_LAG_MS,
    destroyed: () => {
      local.destroy();
      catalog.clear();
    },
  });
  return { ...store, mismatches };
};
