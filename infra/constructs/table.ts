import { RemovalPolicy } from 'aws-cdk-lib';
import { AttributeType, BillingMode, ProjectionType, StreamViewType, Table } from 'aws-cdk-lib/aws-dynamodb';
import type { Construct } from 'constructs';
import { activeHoldsIndex, linesByBatchIndex, skuListsIndex, stockHistoryIndex, tableKeySchema, tableStreamViewType, timeToLiveAttribute } from '../../functions/store/table';

const attributeType = { S: AttributeType.STRING, N: AttributeType.NUMBER, B: AttributeType.BINARY } as const;

/**
 * The service's one table, the system of record, with the key schema, index and stream the store
 * adapter (functions/store/table.ts) and the local server share. A Table itself, not a construct
 * around one, so that its path, and with it its logical id and the id of the event source mapping
 * that reads its stream, are what they were before the stack was split.
 */
export class AllocationTable extends Table {
  constructor(scope: Construct, id: string) {
    super(scope, id, {
      partitionKey: {
        name: tableKeySchema.partitionKey.name,
        type: attributeType[tableKeySchema.partitionKey.type],
      },
      sortKey: { name: tableKeySchema.sortKey.name, type: attributeType[tableKeySchema.sortKey.type] },
      // Traffic is spiky and mostly idle: pay per request rather than for provisioned capacity.
      billingMode: BillingMode.PAY_PER_REQUEST,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      // The table is the system of record: neither `cdk destroy` nor a console click deletes it.
      removalPolicy: RemovalPolicy.RETAIN,
      deletionProtection: true,
      // Each committed change, as it was and as it became, for the domain events (./domain-events).
      stream: StreamViewType[tableStreamViewType],
      // Items written only to put an event on the stream go once they have.
      timeToLiveAttribute,
    });
    this.addGlobalSecondaryIndex({
      indexName: linesByBatchIndex.name,
      partitionKey: { name: linesByBatchIndex.partitionKey.name, type: attributeType[linesByBatchIndex.partitionKey.type] },
      sortKey: { name: linesByBatchIndex.sortKey.name, type: attributeType[linesByBatchIndex.sortKey.type] },
      // A shrinking batch moves the lines it reads here: each must come whole, without a second read.
      projectionType: ProjectionType.ALL,
    });
    this.addGlobalSecondaryIndex({
      indexName: activeHoldsIndex.name,
      partitionKey: { name: activeHoldsIndex.partitionKey.name, type: attributeType[activeHoldsIndex.partitionKey.type] },
      sortKey: { name: activeHoldsIndex.sortKey.name, type: attributeType[activeHoldsIndex.sortKey.type] },
      // The sweeper needs only which holds expired: it reads each hold's record before ending it.
      projectionType: ProjectionType.INCLUDE,
      nonKeyAttributes: ['holdid'],
    });
    this.addGlobalSecondaryIndex({
      indexName: stockHistoryIndex.name,
      partitionKey: { name: stockHistoryIndex.partitionKey.name, type: attributeType[stockHistoryIndex.partitionKey.type] },
      sortKey: { name: stockHistoryIndex.sortKey.name, type: attributeType[stockHistoryIndex.sortKey.type] },
      // A page of the history answers every field of its entries from the index alone.
      projectionType: ProjectionType.ALL,
    });
    this.addGlobalSecondaryIndex({
      indexName: skuListsIndex.name,
      partitionKey: { name: skuListsIndex.partitionKey.name, type: attributeType[skuListsIndex.partitionKey.type] },
      sortKey: { name: skuListsIndex.sortKey.name, type: attributeType[skuListsIndex.sortKey.type] },
      // A page reads each SKU's stock from the table: the index need only name the SKUs.
      projectionType: ProjectionType.KEYS_ONLY,
    });
  }
}
