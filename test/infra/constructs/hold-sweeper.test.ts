import { describe, expect, it } from 'vitest';
import { logicalIdOf } from '../cdk-app';
import { synthesize } from '../synthesized';

const synthesized = synthesize();
const { stack, template } = synthesized;

describe('the hold sweeper', () => {
  it("has Lambda retry no failed sweep, since the next minute's scheduled sweep is the retry", () => {
    const sweeper = logicalIdOf(stack, 'SweepHoldsFunction');
    const configs = Object.values(template.findResources('AWS::Lambda::EventInvokeConfig')).map(({ Properties }) => Properties);
    expect(configs).toEqual([expect.objectContaining({ FunctionName: { Ref: sweeper }, Qualifier: '$LATEST', MaximumRetryAttempts: 0 })]);
  });
});
