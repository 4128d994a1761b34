import { Template } from 'aws-cdk-lib/assertions';
import { SERVICE_NAME } from '../../functions/telemetry-names';
import { defineAllocationApp } from '../../infra/allocation-app';
import type { AllocationStack } from '../../infra/allocation-stack';
import { cdkApp, logicalIdOf } from './cdk-app';

export interface Synthesized {
  readonly stack: AllocationStack;
  readonly template: Template;
}

/** The service's stack as `cdk synth -c ...` makes it, with `context` the `-c` flags, and its template. */
export const synthesize = (context: Record<string, unknown> = {}): Synthesized => {
  const stack = defineAllocationApp(cdkApp(context));
  return { stack, template: Template.fromStack(stack) };
};

/** What every function is told for its logs and metrics, by default. */
export const telemetryNames = {
  POWERTOOLS_SERVICE_NAME: SERVICE_NAME,
  POWERTOOLS_LOG_LEVEL: 'INFO',
  POWERTOOLS_LOGGER_SAMPLE_RATE: '0.01',
};

/** The template's resource behind the function `${name}Function` (Batches, Allocations, PublishEvents). */
export const functionNamed = ({ stack, template }: Synthesized, name: string) =>
  template.toJSON().Resources[logicalIdOf(stack, `${name}Function`)];

/** The table's ARN, as a role's statements name it. */
export const tableArnOf = ({ stack }: Synthesized) => ({ 'Fn::GetAtt': [logicalIdOf(stack, 'Table'), 'Arn'] });

/**
 * The statements of the role `${name}Role`, each as sorted lists of actions and resources: CDK
 * merges and reorders them freely.
 */
export const statementsOf = ({ stack, template }: Synthesized, name: string) => {
  const role = logicalIdOf(stack, `${name}Role`);
  const policies = template.findResources('AWS::IAM::Policy', { Properties: { Roles: [{ Ref: role }] } });
  return Object.values(policies)
    .flatMap((policy) => policy.Properties.PolicyDocument.Statement)
    .map(({ Effect, Action, Resource, ...rest }) => ({
      ...rest,
      Effect,
      Action: [Action].flat().sort(),
      Resource: [Resource].flat(),
    }));
};

/** The statement that lets a role write to the log group `logGroupId`. */
export const writesTo = ({ stack }: Synthesized, logGroupId: string) => ({
  Effect: 'Allow',
  Action: ['logs:CreateLogStream', 'logs:PutLogEvents'],
  Resource: [{ 'Fn::GetAtt': [logicalIdOf(stack, logGroupId), 'Arn'] }],
});
