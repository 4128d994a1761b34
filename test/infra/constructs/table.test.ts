import { Match } from 'aws-cdk-lib/assertions';
import { describe, it } from 'vitest';
import { activeHoldsIndex, linesByBatchIndex, tableKeySchema, timeToLiveAttribute } from '../../../functions/store/table';
import { synthesize } from '../synthesized';

const { template } = synthesize();

describe('the table', () => {
  it('has the key schema the local server creates', () => {
    const { partitionKey, sortKey } = tableKeySchema;
    template.hasResourceProperties('AWS::DynamoDB::Table', {
      KeySchema: [
        { AttributeName: partitionKey.name, KeyType: 'HASH' },
        { AttributeName: sortKey.name, KeyType: 'RANGE' },
      ],
      AttributeDefinitions: Match.arrayWith([
        { AttributeName: partitionKey.name, AttributeType: partitionKey.type },
        { AttributeName: sortKey.name, AttributeType: sortKey.type },
      ]),
    });
  });

  it('has the index a batch finds its lines by, newest first, holding the whole line', () => {
    const { name, partitionKey, sortKey } = linesByBatchIndex;
    template.hasResourceProperties('AWS::DynamoDB::Table', {
      AttributeDefinitions: Match.arrayWith([
        { AttributeName: partitionKey.name, AttributeType: partitionKey.type },
        { AttributeName: sortKey.name, AttributeType: sortKey.type },
      ]),
      GlobalSecondaryIndexes: Match.arrayWith([
        {
          IndexName: name,
          KeySchema: [
            { AttributeName: partitionKey.name, KeyType: 'HASH' },
            { AttributeName: sortKey.name, KeyType: 'RANGE' },
          ],
          Projection: { ProjectionType: 'ALL' },
        },
      ]),
    });
  });

  it('has the index the sweeper finds expired holds by, sparse: only active holds carry its key', () => {
    const { name, partitionKey, sortKey } = activeHoldsIndex;
    template.hasResourceProperties('AWS::DynamoDB::Table', {
      GlobalSecondaryIndexes: Match.arrayWith([
        {
          IndexName: name,
          KeySchema: [
            { AttributeName: partitionKey.name, KeyType: 'HASH' },
            { AttributeName: sortKey.name, KeyType: 'RANGE' },
          ],
          Projection: { ProjectionType: 'INCLUDE', NonKeyAttributes: ['holdid'] },
        },
      ]),
    });
  });

  it('is billed per request, with no capacity provisioned', () => {
    template.hasResourceProperties('AWS::DynamoDB::Table', {
      BillingMode: 'PAY_PER_REQUEST',
      ProvisionedThroughput: Match.absent(),
    });
  });

  it('keeps point-in-time recovery on', () => {
    template.hasResourceProperties('AWS::DynamoDB::Table', {
      PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
    });
  });

  it('streams every change with the item as it was and as it became', () => {
    template.hasResourceProperties('AWS::DynamoDB::Table', {
      StreamSpecification: { StreamViewType: 'NEW_AND_OLD_IMAGES' },
    });
  });

  it('lets DynamoDB delete the items whose time to live has passed', () => {
    template.hasResourceProperties('AWS::DynamoDB::Table', {
      TimeToLiveSpecification: { AttributeName: timeToLiveAttribute, Enabled: true },
    });
  });

  it('survives stack deletion, replacement and a delete call', () => {
    template.hasResource('AWS::DynamoDB::Table', {
      DeletionPolicy: 'Retain',
      UpdateReplacePolicy: 'Retain',
      Properties: Match.objectLike({ DeletionProtectionEnabled: true }),
    });
  });
});
