import type { Catalog } from './catalog';
import { Unsupported } from './errors';

/** The calls of DynamoDB Streams the simulator's stream reader makes (tools/simulate/stream.ts). */

type Request = Readonly<Record<string, unknown>>;

export const describeStream = (catalog: Catalog, request: Request) => ({ StreamDescription: catalog.stream(request.StreamArn).description() });

export const getShardIterator = (catalog: Catalog, request: Request) => {
  if (request.SequenceNumber !== undefined) throw new Unsupported('shard iterators at a sequence number');
  return { ShardIterator: catalog.stream(request.StreamArn).iterator(String(request.ShardId), String(request.ShardIteratorType)) };
};

/** An iterator begins with its stream's ARN (see Stream.read). */
export const getRecords = (catalog: Catalog, request: Request) => {
  const iterator = String(request.ShardIterator);
  const limit = request.Limit === undefined ? undefined : Number(request.Limit);
  return catalog.stream(iterator.split('|')[0]).read(iterator, limit);
};
