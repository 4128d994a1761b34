import { DescribeTableCommand } from '@aws-sdk/client-dynamodb';
import { DescribeStreamCommand, GetRecordsCommand, GetShardIteratorCommand, type _Record as StreamRecord } from '@aws-sdk/client-dynamodb-streams';
import { setTimeout as sleep } from 'node:timers/promises';
import type { DomainEvent } from '../../domain/events';
import { eventsOfRecord } from '../../functions/events/stream-events';
import { recordAsOnAws } from '../../local/event-stream';
import type { StoreOfRecord } from './store-of-record';

/*
 * The events a run's commits made: its table's stream read from the start, each record turned into
 * events by the consumer's own code. The store may keep a record back a while (DynamoDB Local about
 * 50 ms), so the stream is read until it holds as many records as the run's commits changed items,
 * or stops growing.
 */

/** How long the stream may stay short of the records expected (a write that changed nothing makes none) before the reading stops, in the store's lags. */
const QUIET_LAGS = 10;
const POLL_MS = 25;

export const streamEvents = async ({ tables, streams, streamLagMs }: StoreOfRecord, tableName: string, recordsExpected: number): Promise<DomainEvent[]> => {
  const quietMs = QUIET_LAGS * streamLagMs;
  const { Table } = await tables.send(new DescribeTableCommand({ TableName: tableName }));
  const StreamArn = Table?.LatestStreamArn;
  if (!StreamArn) throw new Error(`Table ${tableName} has no stream`);
  const { StreamDescription } = await streams.send(new DescribeStreamCommand({ StreamArn }));
  const records: StreamRecord[] = [];
  for (const { ShardId } of StreamDescription?.Shards ?? []) {
    let iterator = (await streams.send(new GetShardIteratorCommand({ StreamArn, ShardId, ShardIteratorType: 'TRIM_HORIZON' }))).ShardIterator;
    let quietSince = performance.now();
    while (iterator && records.length < recordsExpected) {
      const answer = await streams.send(new GetRecordsCommand({ ShardIterator: iterator }));
      iterator = answer.NextShardIterator;
      records.push(...(answer.Records ?? []));
      if ((answer.Records ?? []).length > 0) quietSince = performance.now();
      else if (performance.now() - quietSince >= quietMs) break;
      else await sleep(POLL_MS);
    }
  }
  return records.flatMap((record) => eventsOfRecord(recordAsOnAws(record)));
};
