/*
 * What the twin compares of DynamoDB Local's answer and the memory store's: everything, but for
 * what is rightly different between two stores (when a table or a stream was made, its stream's
 * ARN, shard and iterators, a record's id, time and sequence number) and the capacity DynamoDB
 * Local reports unasked. Those are replaced by a mark of their presence, so that one answer having
 * such a field and the other not is still a difference. The order of items, of a transaction's
 * reasons and of a stream's records is compared as it is.
 */

type Json = unknown;
type JsonObject = Record<string, Json>;

const PRESENT = '(present)';

const isObject = (value: Json): value is JsonObject => value !== null && typeof value === 'object' && !Array.isArray(value);

/** Replaces `object[name]` by the mark of its presence, when it is there. */
const marked = (object: Json, ...names: string[]) => {
  if (!isObject(object)) return;
  for (const name of names) if (object[name] !== undefined) object[name] = PRESENT;
};

const tableDescription = (table: Json) => {
  marked(table, 'CreationDateTime', 'LatestStreamLabel', 'LatestStreamArn');
  if (isObject(table)) marked(table.BillingModeSummary, 'LastUpdateToPayPerRequestDateTime');
};

const streamRecords = (records: Json) => {
  for (const record of Array.isArray(records) ? records : []) {
    marked(record, 'eventID');
    if (isObject(record)) marked(record.dynamodb, 'ApproximateCreationDateTime', 'SequenceNumber');
  }
};

/** An answer as the twin compares it: a copy, with what rightly differs marked. */
export const comparable = (operation: string, body: Json): Json => {
  const copy = structuredClone(body);
  if (!isObject(copy)) return copy;
  delete copy.ConsumedCapacity;
  switch (operation) {
    case 'CreateTable':
    case 'DeleteTable':
      tableDescription(copy.TableDescription);
      break;
    case 'DescribeTable':
      tableDescription(copy.Table);
      break;
    case 'DescribeStream': {
      const description = copy.StreamDescription;
      marked(description, 'StreamArn', 'StreamLabel', 'CreationRequestDateTime');
      for (const shard of isObject(description) && Array.isArray(description.Shards) ? description.Shards : []) {
        marked(shard, 'ShardId');
        if (isObject(shard)) marked(shard.SequenceNumberRange, 'StartingSequenceNumber', 'EndingSequenceNumber');
      }
      break;
    }
    case 'GetShardIterator':
      marked(copy, 'ShardIterator');
      break;
    case 'GetRecords':
      marked(copy, 'NextShardIterator');
      streamRecords(copy.Records);
      break;
  }
  return copy;
};

export const comparableRecords = (records: readonly Json[]): Json => {
  const copy = structuredClone(records);
  streamRecords(copy);
  return copy;
};

/** Where two JSON values differ, as paths into them: objects by their entries whatever their order, arrays element by element. */
export const differences = (a: Json, b: Json, path = '', found: string[] = [], most = 10): string[] => {
  if (found.length >= most) return found;
  if (Array.isArray(a) && Array.isArray(b)) {
    if (a.length !== b.length) found.push(`${path || '(the answer)'}: ${a.length} elements, and ${b.length}`);
    a.slice(0, Math.min(a.length, b.length)).forEach((element, index) => differences(element, b[index], `${path}[${index}]`, found, most));
  } else if (isObject(a) && isObject(b)) {
    for (const name of new Set([...Object.keys(a), ...Object.keys(b)])) differences(a[name], b[name], path ? `${path}.${name}` : name, found, most);
  } else if (a !== b) {
    found.push(`${path || '(the answer)'}: ${JSON.stringify(a)}, and ${JSON.stringify(b)}`);
  }
  return found;
};
