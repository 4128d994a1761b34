/**
 * The conflict model: an HTTP proxy that speaks DynamoDB's JSON protocol in front of DynamoDB Local,
 * which runs one transaction at a time and so never cancels one for a conflict nor throttles. Through
 * it, the unmodified SDK and adapter meet what AWS answers: a write holds the items it touches for
 * `holdMs` (AWS's few milliseconds, slowed so that this machine's speed is not what binds) before
 * DynamoDB Local sees it; a transaction that touches an item another write holds is cancelled with
 * TransactionConflict; and each partition key's writes are throttled past `writeUnitsPerSecond`.
 * Every assumption, and the AWS documentation it comes from, is in docs/conflict-model.md.
 */
import { randomUUID } from 'node:crypto';
import { Agent, type IncomingHttpHeaders, type IncomingMessage, type OutgoingHttpHeaders, type ServerResponse, createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { DescribeTableCommand } from '@aws-sdk/client-dynamodb';
import { createDynamoDbClient } from '../functions/store/client';
import {
  CONFLICT_REASON,
  type CancellationReason,
  NO_REASON,
  type Refusal,
  THROTTLING_REASON,
  transactionCanceled,
  transactionConflict,
  transactionInProgress,
  writeThrottled,
} from './conflict-model/refusals';
import { type InProcessHandler, type ModelAnswer, type ModelRequest, inProcessHandler } from './conflict-model/in-process';
import { type ModelledRequest, type NamedItem, modelledRequest, writeUnitsOf } from './conflict-model/requests';

export interface ConflictModelSettings {
  /** How long a write holds its items before DynamoDB Local sees it. */
  readonly holdMs: number;
  /** Each partition key value's write budget: refilled continuously at this rate, one second's worth at most. */
  readonly writeUnitsPerSecond: number;
}

/** AWS's per-partition write limit; 100 ms held is a transaction several times as slow as on AWS (docs/capacity.md budgets 10-20 ms). */
export const defaultConflictModelSettings: ConflictModelSettings = { holdMs: 100, writeUnitsPerSecond: 1_000 };

export interface ConflictModelOptions extends Partial<ConflictModelSettings> {
  /** The DynamoDB Local it stands in front of. */
  readonly target: string;
  /** A free port is chosen when absent. */
  readonly port?: number;
  /** The clock, in milliseconds, that refills the write budgets; a test stops it to make them exact. */
  readonly now?: () => number;
}

export interface PartitionCounters {
  readonly tableName: string;
  /** The partition key's value, as text. */
  readonly partitionKey: string;
  /** Spent by the writes let through: the size of each item in KB, rounded up, twice over in a transaction. */
  readonly writeUnits: number;
  /** Items of requests refused for a conflict or for throttling, in this partition. */
  readonly conflicts: number;
  readonly throttles: number;
}

export interface ConflictCounters {
  /** TransactWriteItems received. */
  readonly transactions: number;
  /** TransactWriteItems that DynamoDB Local carried out; the others were refused here, or by their conditions there. */
  readonly committed: number;
  /** PutItem, UpdateItem and DeleteItem received. */
  readonly singleWrites: number;
  /** Requests refused for a conflict: cancelled transactions, TransactionConflictException. */
  readonly conflicts: number;
  /** Requests refused for throttling: cancelled transactions, ThrottlingException. */
  readonly throttles: number;
  /** Transactions refused as a repeat of one still in flight (the SDK's retry of a call it gave up waiting for). */
  readonly inProgress: number;
  readonly partitions: readonly PartitionCounters[];
}

export interface ConflictModel {
  /** Where clients send their requests instead of DynamoDB Local's endpoint. */
  readonly endpoint: string;
  /**
   * The same model for a client in this process, without a socket between them (`npm start`'s:
   * local/start.ts): an SDK request handler that answers as the endpoint does, and honours the
   * call's abort signal and request timeout as the SDK's own handler does.
   */
  readonly requestHandler: InProcessHandler;
  readonly settings: ConflictModelSettings;
  counters(): ConflictCounters;
  /** Items held by writes in flight at this moment. */
  heldItems(): number;
  stop(): Promise<void>;
}

interface KeySchema {
  readonly partitionKey: string;
  readonly sortKey?: string;
  readonly tableArn: string;
}

/** An item the model can tell apart from every other: its table and its whole key. */
interface KeyedItem {
  readonly itemId: string;
  readonly partitionId: string;
  readonly tableName: string;
  readonly partitionKey: string;
  readonly tableArn: string;
  readonly writeUnits: number;
}

interface Holders {
  transactions: number;
  singleWrites: number;
}

interface Partition {
  tokens: number;
  refilledAt: number;
  counters: { -readonly [Field in keyof PartitionCounters]: PartitionCounters[Field] };
}

/** What DynamoDB Local needs of a request's headers: the operation, the body's type, and the access key in the authorization. */
const FORWARDED_HEADERS = ['content-type', 'x-amz-target', 'authorization'] as const;

/** An answer's headers that belong to it rather than to its connection; its length is set where it is sent. */
const endToEnd = (headers: IncomingHttpHeaders): Record<string, string> => {
  const { connection: _connection, 'keep-alive': _keepAlive, 'transfer-encoding': _encoding, 'content-length': _length, ...own } = singleValued(headers);
  return own;
};

/** Headers as one value each, repeated ones joined as HTTP joins them. */
const singleValued = (headers: IncomingHttpHeaders): Record<string, string> => {
  const single: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) if (value !== undefined) single[name] = Array.isArray(value) ? value.join(', ') : value;
  return single;
};

const valueText = (value: unknown): string => {
  const [type, content] = Object.entries(value as Record<string, unknown>)[0] ?? [];
  return type === 'S' || type === 'N' || type === 'B' ? String(content) : JSON.stringify(value);
};

export const startConflictModel = async ({ target, port = 0, now = () => performance.now(), ...chosen }: ConflictModelOptions): Promise<ConflictModel> => {
  const settings: ConflictModelSettings = { ...defaultConflictModelSettings, ...chosen };
  const targetUrl = new URL(target);
  const agent = new Agent({ keepAlive: true });
  const schemaClient = createDynamoDbClient(target);
  const schemas = new Map<string, Promise<KeySchema>>();
  const held = new Map<string, Holders>();
  const tokensInFlight = new Set<string>();
  const partitions = new Map<string, Partition>();
  const totals = { transactions: 0, committed: 0, singleWrites: 0, conflicts: 0, throttles: 0, inProgress: 0 };

  /** Asked of DynamoDB Local once per table; a table that is missing is asked again next time. */
  const keySchemaOf = (tableName: string): Promise<KeySchema> => {
    let schema = schemas.get(tableName);
    if (!schema) {
      schema = schemaClient.send(new DescribeTableCommand({ TableName: tableName })).then(({ Table }) => ({
        partitionKey: Table?.KeySchema?.find(({ KeyType }) => KeyType === 'HASH')?.AttributeName ?? '',
        sortKey: Table?.KeySchema?.find(({ KeyType }) => KeyType === 'RANGE')?.AttributeName,
        tableArn: Table?.TableArn ?? `arn:aws:dynamodb:local:000000000000:table/${tableName}`,
      }));
      schemas.set(tableName, schema);
      schema.catch(() => schemas.delete(tableName));
    }
    return schema;
  };

  const keyed = async ({ tableName, attributes, writtenBytes }: NamedItem, transactional: boolean): Promise<KeyedItem | undefined> => {
    const { partitionKey, sortKey, tableArn } = await keySchemaOf(tableName);
    const keyValue = (name: string | undefined) => (name === undefined ? undefined : attributes[name]);
    const partitionValue = keyValue(partitionKey);
    if (partitionValue === undefined) return undefined;
    const partitionId = JSON.stringify([tableName, partitionValue]);
    return {
      itemId: JSON.stringify([tableName, partitionValue, keyValue(sortKey) ?? null]),
      partitionId,
      tableName,
      partitionKey: valueText(partitionValue),
      tableArn,
      writeUnits: writtenBytes === 0 ? 0 : writeUnitsOf(writtenBytes) * (transactional ? 2 : 1),
    };
  };

  const partitionOf = ({ partitionId, tableName, partitionKey }: KeyedItem): Partition => {
    let partition = partitions.get(partitionId);
    if (!partition) {
      partition = {
        tokens: settings.writeUnitsPerSecond,
        refilledAt: now(),
        counters: { tableName, partitionKey, writeUnits: 0, conflicts: 0, throttles: 0 },
      };
      partitions.set(partitionId, partition);
    }
    const at = now();
    partition.tokens = Math.min(settings.writeUnitsPerSecond, partition.tokens + ((at - partition.refilledAt) / 1000) * settings.writeUnitsPerSecond);
    partition.refilledAt = at;
    return partition;
  };

  /**
   * A transaction conflicts with any write in flight on its items (another transaction, or a
   * single-item write, which DynamoDB lists among the ongoing requests a transactional read conflicts
   * with); a single-item write only with a transaction, since DynamoDB serializes single-item writes.
   */
  const conflicting = (kind: ModelledRequest['kind'], { itemId }: KeyedItem): boolean => {
    const holders = held.get(itemId);
    if (!holders) return false;
    return kind === 'single-write' ? holders.transactions > 0 : holders.transactions + holders.singleWrites > 0;
  };

  /** The items whose partitions cannot pay for this request's writes now; every one pays, or none does. */
  const throttledItems = (items: readonly KeyedItem[]): Set<KeyedItem> => {
    const owed = new Map<Partition, number>();
    for (const item of items) {
      const partition = partitionOf(item);
      owed.set(partition, (owed.get(partition) ?? 0) + item.writeUnits);
    }
    const short = new Set([...owed].filter(([partition, units]) => units > partition.tokens).map(([partition]) => partition));
    if (short.size === 0) {
      for (const [partition, units] of owed) {
        partition.tokens -= units;
        partition.counters.writeUnits += units;
      }
    }
    return new Set(items.filter((item) => short.has(partitionOf(item))));
  };

  /** The refusal DynamoDB would answer now, or undefined when the request may go on. */
  const refusalOf = (kind: ModelledRequest['kind'], items: readonly KeyedItem[]): Refusal | undefined => {
    const conflicts = items.map((item) => conflicting(kind, item));
    if (conflicts.some(Boolean)) {
      totals.conflicts++;
      items.forEach((item, index) => {
        if (conflicts[index]) partitionOf(item).counters.conflicts++;
      });
      return kind === 'single-write' ? transactionConflict() : transactionCanceled(conflicts.map((conflict) => (conflict ? CONFLICT_REASON : NO_REASON)));
    }
    if (kind === 'transactional-read') return undefined;
    const throttled = throttledItems(items);
    if (throttled.size === 0) return undefined;
    totals.throttles++;
    for (const item of throttled) partitionOf(item).counters.throttles++;
    return kind === 'single-write'
      ? writeThrottled(items[0]!.tableArn)
      : transactionCanceled(items.map((item): CancellationReason => (throttled.has(item) ? THROTTLING_REASON : NO_REASON)));
  };

  const hold = (items: readonly KeyedItem[], transactional: boolean): (() => void) => {
    const field = transactional ? 'transactions' : 'singleWrites';
    for (const { itemId } of items) {
      const holders = held.get(itemId) ?? { transactions: 0, singleWrites: 0 };
      holders[field]++;
      held.set(itemId, holders);
    }
    return () => {
      for (const { itemId } of items) {
        const holders = held.get(itemId)!;
        holders[field]--;
        if (holders.transactions + holders.singleWrites === 0) held.delete(itemId);
      }
    };
  };

  const refuse = ({ status, body }: Refusal): ModelAnswer => ({
    status,
    headers: { 'content-type': 'application/x-amz-json-1.0', 'x-amzn-requestid': randomUUID() },
    body: Buffer.from(JSON.stringify(body)),
  });

  /**
   * Sends the request on with the headers DynamoDB Local reads; resolves with its answer once it has
   * answered in full (undefined when the connection to it failed), even when the client has gone
   * meanwhile (its deadline passed), since the write is done all the same and its items are free
   * again. The SDK's other headers (user agent, invocation id, attempt) would only cost DynamoDB
   * Local the parsing: about a twentieth of its CPU per request under a hot SKU's load.
   */
  const forward = ({ method, path, headers: incoming, body }: ModelRequest): Promise<ModelAnswer | undefined> =>
    new Promise((resolve) => {
      const headers: OutgoingHttpHeaders = { host: targetUrl.host, 'content-length': body.length };
      for (const name of FORWARDED_HEADERS) if (incoming[name] !== undefined) headers[name] = incoming[name];
      const outgoing = request({ host: targetUrl.hostname, port: targetUrl.port, path, method, headers, agent }, (reply) => {
        const parts: Buffer[] = [];
        reply.on('data', (part: Buffer) => parts.push(part));
        reply.on('end', () => resolve({ status: reply.statusCode ?? 502, headers: endToEnd(reply.headers), body: Buffer.concat(parts) }));
        reply.on('error', () => resolve(undefined));
      });
      // A DynamoDB Local that is gone is a store that does not answer: the client sees the connection drop.
      outgoing.on('error', () => resolve(undefined));
      outgoing.end(body);
    });

  /**
   * The request's items with their keys, or undefined when the model cannot tell them (no such
   * table, a key attribute missing): DynamoDB Local then answers the request with its own error.
   */
  const keyedItemsOf = async ({ kind, items }: ModelledRequest): Promise<KeyedItem[] | undefined> => {
    try {
      const keyedItems = await Promise.all(items.map((item) => keyed(item, kind === 'transactional-write')));
      return keyedItems.every((item) => item !== undefined) ? keyedItems : undefined;
    } catch {
      return undefined;
    }
  };

  const countersNow = (): ConflictCounters => ({ ...totals, partitions: [...partitions.values()].map(({ counters }) => ({ ...counters })) });

  /** What the model answers a request, whichever way it came; undefined drops the client's connection. */
  const answer = async (received: ModelRequest): Promise<ModelAnswer | undefined> => {
    const modelled = modelledRequest(received.headers['x-amz-target'], received.body.toString('utf8'));
    if (modelled?.kind === 'transactional-write') totals.transactions++;
    if (modelled?.kind === 'single-write') totals.singleWrites++;
    const items = modelled && (await keyedItemsOf(modelled));
    if (!modelled || !items) return forward(received);
    const { kind, clientRequestToken } = modelled;
    // The same transaction again, not another: it cannot conflict with itself. DynamoDB Local
    // answers a repeat of one that has finished as DynamoDB does, without writing again.
    if (clientRequestToken !== undefined && tokensInFlight.has(clientRequestToken)) {
      totals.inProgress++;
      return refuse(transactionInProgress());
    }
    const refusal = refusalOf(kind, items);
    if (refusal) return refuse(refusal);
    if (kind === 'transactional-read') return forward(received);
    const release = hold(items, kind === 'transactional-write');
    if (clientRequestToken !== undefined) tokensInFlight.add(clientRequestToken);
    try {
      await sleep(settings.holdMs);
      const forwarded = await forward(received);
      if (kind === 'transactional-write' && forwarded?.status === 200) totals.committed++;
      return forwarded;
    } finally {
      release();
      if (clientRequestToken !== undefined) tokensInFlight.delete(clientRequestToken);
    }
  };

  const handle = async (incoming: IncomingMessage, response: ServerResponse) => {
    const chunks: Buffer[] = [];
    for await (const chunk of incoming) chunks.push(chunk as Buffer);
    if (incoming.method === 'GET' && incoming.url === '/counters') {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify(countersNow()));
      return;
    }
    const answered = await answer({
      method: incoming.method ?? 'POST',
      path: incoming.url ?? '/',
      headers: singleValued(incoming.headers),
      body: Buffer.concat(chunks),
    });
    if (!answered) return response.destroy();
    response.writeHead(answered.status, { ...answered.headers, 'content-length': answered.body.length });
    response.end(answered.body);
  };

  const server = createServer((incoming, response) => {
    handle(incoming, response).catch(() => response.destroy());
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  const { port: chosenPort } = server.address() as AddressInfo;

  return {
    endpoint: `http://127.0.0.1:${chosenPort}`,
    requestHandler: inProcessHandler(answer),
    settings,
    counters: countersNow,
    heldItems: () => held.size,
    stop: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      agent.destroy();
      schemaClient.destroy();
    },
  };
};
