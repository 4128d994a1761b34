import { randomUUID } from 'node:crypto';
import { Unsupported } from './errors';
import { type Item, itemSizeBytes, itemsEqual, streamImage } from './values';

/*
 * A table's stream as DynamoDB Local keeps it: one shard, a record for each write that changed an
 * item (a put of the same item, an update that sets what was there, a delete of nothing make none),
 * in commit order, each with both images. Sequence numbers count every table's records together,
 * as DynamoDB Local's do. Unlike DynamoDB Local, which keeps a record back about 50 ms, a record
 * is readable as soon as its write is done.
 */

export const REGION = 'ddblocal';
const SEQUENCE_DIGITS = 21;
const MAX_RECORDS_PER_READ = 1_000;

const sequenceText = (sequence: bigint) => sequence.toString().padStart(SEQUENCE_DIGITS, '0');

/** DynamoDB Local's dates are epoch seconds to the millisecond. */
export const epochSeconds = (ms: number) => ms / 1000;

interface StreamRecord {
  readonly sequence: bigint;
  readonly json: Readonly<Record<string, unknown>>;
}

export class Stream {
  readonly label: string;
  readonly arn: string;
  readonly shardId: string;
  private readonly records: StreamRecord[] = [];

  constructor(
    tableArn: string,
    private readonly tableName: string,
    private readonly keySchema: unknown,
    private readonly createdAt: number,
    private readonly firstSequence: bigint,
    shardNumber: number,
  ) {
    this.label = new Date(createdAt).toISOString().slice(0, 23);
    this.arn = `${tableArn}/stream/${this.label}`;
    this.shardId = `shardId-${String(createdAt).padStart(20, '0')}-${shardNumber.toString(16).padStart(8, '0')}`;
  }

  /** A record of the change `sequence` made, unless it changed nothing. */
  record(keys: Item, oldImage: Item | undefined, newImage: Item | undefined, sequence: () => bigint, now: number): void {
    if (oldImage === undefined ? newImage === undefined : newImage !== undefined && itemsEqual(oldImage, newImage)) return;
    const number = sequence();
    this.records.push({
      sequence: number,
      json: {
        eventID: randomUUID(),
        eventName: oldImage === undefined ? 'INSERT' : newImage === undefined ? 'REMOVE' : 'MODIFY',
        eventVersion: '1.1',
        eventSource: 'aws:dynamodb',
        awsRegion: REGION,
        dynamodb: {
          // DynamoDB Local gives the minute of the write.
          ApproximateCreationDateTime: Math.floor(now / 60_000) * 60,
          Keys: keys,
          ...(newImage ? { NewImage: streamImage(newImage) } : {}),
          ...(oldImage ? { OldImage: streamImage(oldImage) } : {}),
          SequenceNumber: sequenceText(number),
          SizeBytes: itemSizeBytes(keys) + itemSizeBytes(newImage) + itemSizeBytes(oldImage),
          StreamViewType: 'NEW_AND_OLD_IMAGES',
        },
      },
    });
  }

  description(): Record<string, unknown> {
    return {
      StreamArn: this.arn,
      StreamLabel: this.label,
      StreamStatus: 'ENABLED',
      StreamViewType: 'NEW_AND_OLD_IMAGES',
      CreationRequestDateTime: epochSeconds(this.createdAt),
      TableName: this.tableName,
      KeySchema: this.keySchema,
      Shards: [{ ShardId: this.shardId, SequenceNumberRange: { StartingSequenceNumber: sequenceText(this.firstSequence) } }],
    };
  }

  /** An iterator names the stream, the shard and the sequence number it reads from, as DynamoDB Local's do. */
  private iteratorFrom(sequence: bigint): string {
    return `${this.arn}|001|${Buffer.from(`${this.shardId}|${sequenceText(sequence)}`).toString('base64')}`;
  }

  iterator(shardId: string, type: string): string {
    if (shardId !== this.shardId) throw new Unsupported(`the shard ${shardId}, not the one of stream ${this.arn}`);
    if (type !== 'TRIM_HORIZON') throw new Unsupported(`shard iterators of type ${type}`);
    return this.iteratorFrom(this.firstSequence);
  }

  read(iterator: string, limit = MAX_RECORDS_PER_READ): { Records: unknown[]; NextShardIterator: string } {
    const [arn, , position] = iterator.split('|');
    const [shardId, sequence] = Buffer.from(position ?? '', 'base64').toString().split('|');
    if (arn !== this.arn || shardId !== this.shardId || sequence === undefined) throw new Unsupported(`the shard iterator ${iterator}`);
    const from = BigInt(sequence);
    const first = this.records.findIndex((record) => record.sequence >= from);
    const records = first < 0 ? [] : this.records.slice(first, first + limit);
    const next = records.length === 0 ? from : (records.at(-1) as StreamRecord).sequence + 1n;
    return { Records: records.map(({ json }) => json), NextShardIterator: this.iteratorFrom(next) };
  }
}
