import { randomUUID } from 'node:crypto';
import type { HttpHandler } from '@smithy/core/protocols';
import type { HttpHandlerOptions, HttpRequest, HttpResponse } from '@smithy/types';
import type { Catalog } from './catalog';
import { createTable, deleteTable, describeTable, describeTimeToLive, updateTimeToLive } from './control-plane';
import { batchGetItem, deleteItem, getItem, putItem, query, scan, transactGetItems, transactWriteItems, updateItem } from './data-plane';
import { DynamoDbError, Unsupported } from './errors';
import { describeStream, getRecords, getShardIterator } from './streams';

/*
 * The store as the SDK reaches it: an HTTP handler that reads DynamoDB's JSON protocol (the
 * operation in `x-amz-target`, the input as JSON) and answers as DynamoDB Local would, so that the
 * SDK's marshalling, lib-dynamodb and its parsing of errors all run as they do against it.
 */

type Operation = (catalog: Catalog, request: Readonly<Record<string, unknown>>) => unknown;

const OPERATIONS: Readonly<Record<string, Operation>> = {
  'DynamoDB_20120810.CreateTable': createTable,
  'DynamoDB_20120810.DescribeTable': describeTable,
  'DynamoDB_20120810.DeleteTable': deleteTable,
  'DynamoDB_20120810.DescribeTimeToLive': describeTimeToLive,
  'DynamoDB_20120810.UpdateTimeToLive': updateTimeToLive,
  'DynamoDB_20120810.GetItem': getItem,
  'DynamoDB_20120810.PutItem': putItem,
  'DynamoDB_20120810.UpdateItem': updateItem,
  'DynamoDB_20120810.DeleteItem': deleteItem,
  'DynamoDB_20120810.BatchGetItem': batchGetItem,
  'DynamoDB_20120810.TransactGetItems': transactGetItems,
  'DynamoDB_20120810.TransactWriteItems': transactWriteItems,
  'DynamoDB_20120810.Query': query,
  'DynamoDB_20120810.Scan': scan,
  'DynamoDBStreams_20120810.DescribeStream': describeStream,
  'DynamoDBStreams_20120810.GetShardIterator': getShardIterator,
  'DynamoDBStreams_20120810.GetRecords': getRecords,
};

export interface Answer {
  readonly status: number;
  readonly body: string;
}

/** What the store answers a call, by its target and JSON input; a call it does not support is thrown. */
export const answer = (catalog: Catalog, target: string, input: string): Answer => {
  const operation = OPERATIONS[target];
  if (!operation) throw new Unsupported(`the operation ${target}`);
  try {
    return { status: 200, body: JSON.stringify(operation(catalog, JSON.parse(input || '{}'))) };
  } catch (error) {
    if (error instanceof DynamoDbError) return { status: 400, body: JSON.stringify(error.body) };
    throw error;
  }
};

export const targetOf = (request: HttpRequest): string =>
  Object.entries(request.headers).find(([name]) => name.toLowerCase() === 'x-amz-target')?.[1] ?? '';

const utf8 = new TextDecoder();

/** The SDK sends its JSON as bytes (a Uint8Array that also answers string methods, with a warning), or as text. */
export const bodyOf = (request: HttpRequest): string =>
  typeof request.body === 'string' ? request.body : request.body === undefined ? '' : utf8.decode(request.body as Uint8Array);

export const httpResponse = ({ status, body }: Answer, requestId: string): HttpResponse => ({
  statusCode: status,
  headers: { 'content-type': 'application/x-amz-json-1.0', 'x-amzn-requestid': requestId },
  body: Buffer.from(body),
});

/** As the SDK's own handler fails a call whose abort signal has fired (local/conflict-model/in-process.ts). */
const aborted = () => Object.assign(new Error('Request aborted'), { name: 'AbortError' });

export const memoryRequestHandler = (catalog: Catalog): HttpHandler<Record<string, never>> => ({
  handle: async (request: HttpRequest, { abortSignal }: HttpHandlerOptions = {}) => {
    if (abortSignal?.aborted) throw aborted();
    return { response: httpResponse(answer(catalog, targetOf(request), bodyOf(request)), randomUUID()) };
  },
  updateHttpClientConfig: () => undefined,
  httpHandlerConfigs: () => ({}),
});
