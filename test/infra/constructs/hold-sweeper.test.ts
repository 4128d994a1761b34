import { describe, expect, it } from 'vitest';
import { activeHoldsIndex } from '../../../functions/store/table';
import { logicalIdOf } from '../cdk-app';
import { statementsOf, synthesize, tableArnOf, writesTo } from '../synthesized';

const synthesized = synthesize();
const { stack, template } = synthesized;
const tableArn = tableArnOf(synthesized);

describe('the hold sweeper', () => {
  it("has Lambda retry no failed sweep, since the next minute's scheduled sweep is the retry", () => {
    const sweeper = logicalIdOf(stack, 'SweepHoldsFunction');
    const configs = Object.values(template.findResources('AWS::Lambda::EventInvokeConfig')).map(({ Properties }) => Properties);
    expect(configs).toEqual([expect.objectContaining({ FunctionName: { Ref: sweeper }, Qualifier: '$LATEST', MaximumRetryAttempts: 0, MaximumEventAgeInSeconds: 60 })]);
  });
});

describe("the hold sweeper's role", () => {
  const onItems = (leadingKeys: string[]) => ({ 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': leadingKeys } });

  it('reads holds, batches and their pieces, and writes only holds, batches, pieces and held units, and only what ending a hold writes', () => {
    expect(statementsOf(synthesized, 'SweepHolds')).toEqual([
      writesTo(synthesized, 'SweepHoldsLogs'),
      {
        Effect: 'Allow',
        Action: ['dynamodb:BatchGetItem', 'dynamodb:GetItem', 'dynamodb:Query'],
        Resource: [tableArn],
        Condition: onItems(['SKU#*', 'PIECES#*', 'HOLD#*']),
      },
      {
        Effect: 'Allow',
        Action: ['dynamodb:DeleteItem', 'dynamodb:UpdateItem'],
        Resource: [tableArn],
        Condition: {
          ...onItems(['SKU#*', 'PIECES#*', 'HOLD#*']),
          // The keys; an item's stock, its count of held units and what its condition compares; the hold's
          // record: status, the expiry its condition compares, when it ended, its time to live, and its key
          // in the active holds' index.
          'ForAllValues:StringEquals': {
            'dynamodb:Attributes': ['pk', 'sk', 'available', 'heldUnits', 'givenBack', 'spreadId', 'pieces', 'status', 'heldUntil', 'endedAt', 'expiresAt', 'activeHoldShard'],
          },
        },
      },
      {
        Effect: 'Allow',
        Action: ['dynamodb:Query'],
        Resource: [{ 'Fn::Join': ['', [tableArn, `/index/${activeHoldsIndex.name}`]] }],
        Condition: onItems(['ACTIVEHOLDS#*']),
      },
    ]);
  });
});
