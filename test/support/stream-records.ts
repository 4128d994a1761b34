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

type Image = NonNullable<NonNullable<DynamoDBRecord['dynamodb']>['NewImage']>;

/**
 * A hold's record as placing it writes it: cart-1, placed at 10:00 until 10:15, 2 LAMP on b1 (at
 * `default`, which the record leaves unnamed) and 1 SOFA on s1 at lyon, listed in the active holds' index.
 */
export const activeHold: Image = {
  pk: { S: 'HOLD#cart-1' },
  sk: { S: 'HOLD' },
  type: { S: 'Hold' },
  holdid: { S: 'cart-1' },
  lines: {
    L: [
      { M: { sku: { S: 'LAMP' }, qty: { N: '2' }, batchref: { S: 'b1' } } },
      { M: { sku: { S: 'SOFA' }, qty: { N: '1' }, batchref: { S: 's1' }, location: { S: 'lyon' } } },
    ],
  },
  status: { S: 'active' },
  heldUntil: { S: '2026-11-23T10:15:00.000Z' },
  activeHoldShard: { S: 'ACTIVEHOLDS#2' },
  placedAt: { S: '2026-11-23T10:00:00.000Z' },
};

/** The hold's record as ending it at `endedAt` leaves it: out of the index, with its time to live. */
export const endedHold = (status: 'released' | 'expired' | 'confirmed', endedAt: string, fields: Image = {}): Image => {
  const { activeHoldShard: _, ...record } = activeHold;
  const timeToLive = Date.parse(endedAt) / 1000 + 2 * 24 * 60 * 60;
  return { ...record, status: { S: status }, endedAt: { S: endedAt }, expiresAt: { N: String(timeToLive) }, ...fields };
};

/** The stream record of a change of an item (a hold's record, a location), from `before` to `after` (either absent). */
export const changeRecord = (n: number, eventName: 'INSERT' | 'MODIFY' | 'REMOVE', before?: Image, after?: Image): DynamoDBRecord => ({
  eventID: `event-${n}`,
  eventName,
  dynamodb: { SequenceNumber: `${1000 + n}`, ...(before ? { OldImage: before } : {}), ...(after ? { NewImage: after } : {}) },
});
