import type { PutEventsCommand, PutEventsCommandOutput, PutEventsRequestEntry } from '@aws-sdk/client-eventbridge';
import type { Context, DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { DEFAULT_RETRY, MAX_ENTRIES_PER_CALL, type PutEventsSender } from '../../functions/events/publisher';
import { eventsOfRecord } from '../../functions/events/stream-events';
import { createPublishEventsHandler } from '../../functions/publish-events';
import { lambdaContext } from '../support/events';
import { allocatedLine } from '../support/stream-records';

/*
 * The stream consumer with the real mapping (stream-events.ts) and a fake EventBridge, which
 * answers each entry as a test tells it: every record below is one Lambda could deliver.
 */

const BUS = 'allocation-test-bus';


/** A line moved from batch b1 to b2 by a change of b1: Deallocated, then Allocated. */
const movedLine = (n: number): DynamoDBRecord => {
  const line = (batchref: string) => ({
    pk: { S: `ORDER#o${n}` },
    sk: { S: 'LINE#LAMP' },
    type: { S: 'Line' },
    orderid: { S: `o${n}` },
    sku: { S: 'LAMP' },
    qty: { N: '2' },
    batchref: { S: batchref },
    lineBatch: { S: `LINES#${batchref}` },
    allocatedAt: { S: '2026-11-23T10:00:00.000Z' },
  });
  return {
    eventID: `event-${n}`,
    eventName: 'MODIFY',
    dynamodb: {
      SequenceNumber: `${1000 + n}`,
      OldImage: line('b1'),
      NewImage: { ...line('b2'), movedAt: { S: '2026-11-23T11:00:00.000Z' } },
    },
  };
};

/** A batch's stock item: no consumer is told of it. */
const batchStock = (n: number): DynamoDBRecord => ({
  eventID: `event-${n}`,
  eventName: 'INSERT',
  dynamodb: {
    SequenceNumber: `${1000 + n}`,
    NewImage: {
      pk: { S: 'SKU#LAMP' },
      sk: { S: 'STOCK#b1' },
      type: { S: 'Batch' },
      ref: { S: 'b1' },
      sku: { S: 'LAMP' },
      qty: { N: '10' },
      available: { N: '10' },
    },
  },
});

const sequenceNumberOf = (record: DynamoDBRecord) => record.dynamodb?.SequenceNumber ?? '';
const idsOf = (record: DynamoDBRecord) => eventsOfRecord(record).map(({ detail }) => detail.id);
const idOf = (entry: PutEventsRequestEntry): string => JSON.parse(entry.Detail ?? '{}').id;

/**
 * EventBridge as a test wants it: `entryFails(id, send)` gives the ErrorCode of the `send`th send
 * of the event with that id (1 for the first), or undefined to take it; `callFails(call)` gives an
 * error to throw for the `call`th call as a whole. Records every call's entries.
 */
class FakeEventBridge implements PutEventsSender {
  readonly calls: PutEventsRequestEntry[][] = [];
  private readonly sends = new Map<string, number>();

  constructor(
    private readonly entryFails: (id: string, send: number) => string | undefined = () => undefined,
    private readonly callFails: (call: number) => Error | undefined = () => undefined,
  ) {}

  async send(command: PutEventsCommand): Promise<PutEventsCommandOutput> {
    const entries = command.input.Entries ?? [];
    this.calls.push(entries);
    const error = this.callFails(this.calls.length);
    if (error) throw error;
    const results = entries.map((entry) => {
      const id = idOf(entry);
      const send = (this.sends.get(id) ?? 0) + 1;
      this.sends.set(id, send);
      const errorCode = this.entryFails(id, send);
      return errorCode ? { ErrorCode: errorCode, ErrorMessage: `${errorCode} on purpose` } : { EventId: `eb-${id}-${send}` };
    });
    return { FailedEntryCount: results.filter((result) => 'ErrorCode' in result).length, Entries: results, $metadata: {} };
  }

  /** How many times each event id was sent, in all calls. */
  sentIds(): string[] {
    return this.calls.flat().map(idOf);
  }
}

const throttled = () => Object.assign(new Error('Rate exceeded'), { name: 'ThrottlingException' });

/** The handler over `eventBridge`, with waits that return at once but are recorded. */
const setUp = (eventBridge: PutEventsSender, environment: { EVENT_BUS_NAME?: string | undefined } = {}) => {
  const waits: number[] = [];
  const handler = createPublishEventsHandler({
    sender: eventBridge,
    eventBusName: { EVENT_BUS_NAME: BUS, ...environment }.EVENT_BUS_NAME,
    wait: async (ms) => {
      waits.push(ms);
    },
  });
  const publish = (records: DynamoDBRecord[], context: Context = lambdaContext()) =>
    handler({ Records: records } satisfies DynamoDBStreamEvent, context);
  return { publish, waits };
};

afterEach(() => {
  vi.restoreAllMocks();
});

describe('the stream consumer', () => {
  it('puts each event on its bus with source allocation, its name as detail-type, its detail (with its id) as JSON, and the time of the change', async () => {
    const eventBridge = new FakeEventBridge();
    const record = allocatedLine(1);
    const [event] = eventsOfRecord(record);

    expect(await setUp(eventBridge).publish([record])).toEqual({ batchItemFailures: [] });

    expect(event?.detail).toMatchObject({ orderid: 'o1', sku: 'LAMP', qty: 2, batchref: 'b1', id: expect.stringMatching(/.+/) });
    expect(eventBridge.calls).toEqual([
      [
        {
          EventBusName: BUS,
          Source: 'allocation',
          DetailType: 'Allocated',
          Detail: JSON.stringify(event?.detail),
          Time: new Date('2026-11-23T10:00:00.000Z'),
        },
      ],
    ]);
  });

  it('publishes nothing for a record that produces no event, and does not report it', async () => {
    const eventBridge = new FakeEventBridge();
    const records = [batchStock(1), allocatedLine(2), batchStock(3)];

    expect(await setUp(eventBridge).publish(records)).toEqual({ batchItemFailures: [] });
    expect(eventBridge.sentIds()).toEqual(idsOf(allocatedLine(2)));
  });

  it('sends more than 10 events in calls of at most 10, in record order', async () => {
    const eventBridge = new FakeEventBridge();
    const records = [allocatedLine(1), movedLine(2), ...Array.from({ length: 20 }, (_, index) => allocatedLine(index + 3))];

    expect(await setUp(eventBridge).publish(records)).toEqual({ batchItemFailures: [] });
    expect(eventBridge.calls.map((entries) => entries.length)).toEqual([MAX_ENTRIES_PER_CALL, MAX_ENTRIES_PER_CALL, 3]);
    expect(eventBridge.sentIds()).toEqual(records.flatMap(idsOf));
    expect(eventBridge.calls[0]?.slice(1, 3).map(({ DetailType }) => DetailType)).toEqual(['Deallocated', 'Allocated']);
  });

  it('reports by sequence number the records whose events keep failing, and sends no other event twice', async () => {
    const records = [allocatedLine(1), allocatedLine(2), allocatedLine(3), allocatedLine(4)];
    const failing = new Set([...idsOf(records[1]!), ...idsOf(records[3]!)]);
    const eventBridge = new FakeEventBridge((id) => (failing.has(id) ? 'InternalFailure' : undefined));

    const result = await setUp(eventBridge).publish(records);

    expect(result).toEqual({ batchItemFailures: [{ itemIdentifier: '1002' }, { itemIdentifier: '1004' }] });
    const sent = eventBridge.sentIds();
    for (const id of [...idsOf(records[0]!), ...idsOf(records[2]!)]) expect(sent.filter((each) => each === id)).toHaveLength(1);
    // Every call after the first carries only the failing entries.
    expect(eventBridge.calls.slice(1).flat().every((entry) => failing.has(idOf(entry)))).toBe(true);
  });

  it('reports a record one of whose two events failed, and does not send again the one that got on the bus', async () => {
    const record = movedLine(1);
    const [deallocated, allocated] = idsOf(record);
    const eventBridge = new FakeEventBridge((id) => (id === allocated ? 'InternalFailure' : undefined));

    expect(await setUp(eventBridge).publish([record])).toEqual({ batchItemFailures: [{ itemIdentifier: sequenceNumberOf(record) }] });
    expect(eventBridge.sentIds().filter((id) => id === deallocated)).toHaveLength(1);
  });

  it('retries an entry that failed for a moment and, once it is on the bus, reports nothing', async () => {
    const records = [allocatedLine(1), allocatedLine(2), allocatedLine(3)];
    const [flaky] = idsOf(records[1]!);
    const eventBridge = new FakeEventBridge((id, send) => (id === flaky && send === 1 ? 'ThrottlingException' : undefined));

    expect(await setUp(eventBridge).publish(records)).toEqual({ batchItemFailures: [] });
    expect(eventBridge.calls.map((entries) => entries.map(idOf))).toEqual([records.flatMap(idsOf), [flaky]]);
  });

  it('retries a call that was throttled as a whole, with the calls after it, and reports nothing once they go through', async () => {
    const records = Array.from({ length: 15 }, (_, index) => allocatedLine(index + 1));
    const eventBridge = new FakeEventBridge(undefined, (call) => (call === 1 ? throttled() : undefined));

    expect(await setUp(eventBridge).publish(records)).toEqual({ batchItemFailures: [] });
    // The throttled call, then both calls of the round after it: nothing was sent after the throttle.
    expect(eventBridge.calls.map((entries) => entries.length)).toEqual([10, 10, 5]);
    expect(eventBridge.calls.slice(1).flat().map(idOf)).toEqual(records.flatMap(idsOf));
  });

  it.each([
    { failures: DEFAULT_RETRY.attempts - 1, reported: false },
    { failures: DEFAULT_RETRY.attempts, reported: true },
  ])(
    'reports a record only once its event failed every send the invocation allows ($failures failures: reported $reported), ' +
      "which after the event source mapping's retries sends it to the dead-letter queue",
    async ({ failures, reported }) => {
      const record = allocatedLine(1);
      const eventBridge = new FakeEventBridge((_, send) => (send <= failures ? 'InternalFailure' : undefined));

      const result = await setUp(eventBridge).publish([record]);

      expect(result.batchItemFailures).toEqual(reported ? [{ itemIdentifier: sequenceNumberOf(record) }] : []);
      expect(eventBridge.calls).toHaveLength(Math.min(failures + 1, DEFAULT_RETRY.attempts));
    },
  );

  it('waits between retries a random time under a bound that doubles each time', async () => {
    const eventBridge = new FakeEventBridge(() => 'InternalFailure');
    const { publish, waits } = setUp(eventBridge);

    vi.spyOn(Math, 'random').mockReturnValue(0.999_999);
    await publish([allocatedLine(1)]);
    vi.spyOn(Math, 'random').mockReturnValue(0);
    await publish([allocatedLine(2)]);

    const bounds = [1, 2, 4].map((factor) => Math.min(DEFAULT_RETRY.maxDelayMs, DEFAULT_RETRY.baseDelayMs * factor));
    expect(waits.slice(0, 3).map(Math.round)).toEqual(bounds);
    expect(waits.slice(3)).toEqual([0, 0, 0]);
  });

  it('reports a record whose events cannot be read, and publishes the records around it', async () => {
    const eventBridge = new FakeEventBridge();
    // Without an eventID, no event of the record could keep its id across deliveries.
    const { eventID: _, ...unreadable } = allocatedLine(2);

    const result = await setUp(eventBridge).publish([allocatedLine(1), unreadable, allocatedLine(3)]);

    expect(result).toEqual({ batchItemFailures: [{ itemIdentifier: sequenceNumberOf(unreadable) }] });
    expect(eventBridge.sentIds()).toEqual([...idsOf(allocatedLine(1)), ...idsOf(allocatedLine(3))]);
  });

  it('gives up on a call EventBridge does not answer a second before the timeout, and reports its records', async () => {
    const sent: PutEventsRequestEntry[][] = [];
    const silent: PutEventsSender = {
      send: (command, options) => {
        sent.push(command.input.Entries ?? []);
        return new Promise((_, reject) => options?.abortSignal?.addEventListener('abort', () => reject(options.abortSignal?.reason)));
      },
    };
    const records = [allocatedLine(1), allocatedLine(2)];
    // 50 ms left before the handler's second to answer.
    const context = { ...lambdaContext(), getRemainingTimeInMillis: () => 1_050 };

    const result = await setUp(silent).publish(records, context);

    expect(result).toEqual({ batchItemFailures: records.map((record) => ({ itemIdentifier: sequenceNumberOf(record) })) });
    expect(sent).toHaveLength(1);
  });

  it('refuses to publish without a bus name, rather than to the account default bus', async () => {
    const eventBridge = new FakeEventBridge();

    await expect(setUp(eventBridge, { EVENT_BUS_NAME: undefined }).publish([allocatedLine(1)])).rejects.toThrow(/EVENT_BUS_NAME/);
    expect(eventBridge.calls).toEqual([]);
  });
});
