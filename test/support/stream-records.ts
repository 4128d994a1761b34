import type { DynamoDBRecord } from 'aws-lambda';

/** The INSERT of an allocated line: one Allocated event. */
export const allocatedLine = (n: number): DynamoDBRecord => ({
  eventID: `event-${n}`,
  eventName: 'INSERT',
  dynamodb: {
    SequenceNumber: `${1000 + n}`,
    NewImage: {
      pk: { S: `ORDER#o${n}` },
      sk: { S: 'LINE#LAMP' },
      type: { S: 'Line' },
      orderid: { S: `o${n}` },
      sku: { S: 'LAMP' },
      qty: { N: '2' },
      batchref: { S: 'b1' },
      lineBatch: { S: 'LINES#b1' },
      allocatedAt: { S: '2026-11-23T10:00:00.000Z' },
    },
  },
});
