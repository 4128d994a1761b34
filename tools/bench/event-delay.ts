/**
 * The delay a developer sees from an allocation's 201 to its event's line: `npm start`
 * (local/start.ts, as it runs) over the bench's DynamoDB Local, allocations one at a time, each
 * timed from the 201's arrival to the moment its Allocated line is read from the server's stdout.
 * One at a time, so that each delay is the stream's and its follower's, not a queue's.
 */
import { randomUUID } from 'node:crypto';
import { createInterface } from 'node:readline';
import { freePort } from '../../local/dynamodb-local';
import { spawnTypeScript, stopChild } from './child-process';
import { jsonPoster } from './load';
import { median, percentile } from './stats';

export interface EventDelay {
  readonly allocations: number;
  readonly medianMs: number;
  readonly p99Ms: number;
  /** Every timed allocation's delay, in the order they ran. */
  readonly samplesMs: readonly number[];
}

/** Enough for the JITs of the server and of DynamoDB Local's stream reads to settle. */
const WARM_UP_ALLOCATIONS = 20;
/** Past this an event is not late but lost. */
const EVENT_TIMEOUT_MS = 10_000;
const STOCK = 1_000_000_000;

export const measureEventDelay = async (dynamoDbEndpoint: string, allocations: number): Promise<EventDelay> => {
  const port = await freePort();
  const server = spawnTypeScript('local/start.ts', {
    env: { PORT: String(port), DYNAMODB_ENDPOINT: dynamoDbEndpoint, TABLE_NAME: `bench-events-${randomUUID().slice(0, 8)}` },
    stdout: 'pipe',
  });
  const http = jsonPoster(port, 1);
  try {
    const seen = allocatedLines(server.stdout!);
    await seen.listening;
    const sku = `bench-events-${randomUUID().slice(0, 8)}`;
    const added = await http.post('/add_batch', { ref: `${sku}-stock`, sku, qty: STOCK, eta: null });
    if (added.status !== 201) throw new Error(`add_batch answered ${added.status}: ${added.body}`);

    const delayOfOneAllocation = async () => {
      const orderid = `order-${randomUUID()}`;
      const lineRead = seen.allocated(orderid);
      const answer = await http.post('/allocate', { orderid, sku, qty: 1 });
      const answeredAt = performance.now();
      if (answer.status !== 201) throw new Error(`allocate answered ${answer.status}: ${answer.body}`);
      return (await lineRead) - answeredAt;
    };
    for (let n = 0; n < WARM_UP_ALLOCATIONS; n++) await delayOfOneAllocation();
    const samplesMs: number[] = [];
    for (let n = 0; n < allocations; n++) samplesMs.push(await delayOfOneAllocation());
    return { allocations, medianMs: median(samplesMs), p99Ms: percentile(samplesMs, 0.99), samplesMs };
  } finally {
    http.close();
    await stopChild(server);
  }
};

/** Watches the server's stdout: when it listens, and when each order's Allocated line is read. */
const allocatedLines = (stdout: NodeJS.ReadableStream) => {
  const waiting = new Map<string, (readAt: number) => void>();
  let onListening = () => {};
  const listening = new Promise<void>((resolve, reject) => {
    onListening = resolve;
    stdout.once('end', () => reject(new Error('npm start exited before it listened')));
  });
  createInterface({ input: stdout }).on('line', (line) => {
    const readAt = performance.now();
    if (/listening on/.test(line)) return onListening();
    if (!line.startsWith('{"source":')) return;
    const { 'detail-type': name, detail } = JSON.parse(line) as { 'detail-type': string; detail: { orderid?: string } };
    if (name === 'Allocated' && detail.orderid !== undefined) waiting.get(detail.orderid)?.(readAt);
  });
  return {
    listening,
    /** When the Allocated line of `orderid` is read; ask before allocating, as the line may come before the 201. */
    allocated: (orderid: string) =>
      new Promise<number>((resolve, reject) => {
        const timeout = setTimeout(() => reject(new Error(`No Allocated line for ${orderid} within ${EVENT_TIMEOUT_MS / 1000} s`)), EVENT_TIMEOUT_MS);
        waiting.set(orderid, (readAt) => {
          clearTimeout(timeout);
          waiting.delete(orderid);
          resolve(readAt);
        });
      }),
  };
};
