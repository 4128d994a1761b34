import { type App, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { AllocationStack } from './allocation-stack';

/** The stack's name in CloudFormation, and so the name of its template in cdk.out. */
export const stackName = 'AllocationService';

/**
 * Puts the service's stack into `app`, configured from the app's context (`-c publicApi=true`,
 * `-c localDynamoDbEndpoint=<url>`), and makes every synth run cdk-nag's AwsSolutions checks: any
 * finding not acknowledged with a reason fails the synth.
 */
export const defineAllocationApp = (app: App): AllocationStack => {
  const stack = new AllocationStack(app, stackName, {
    publicApi: booleanContext(app, 'publicApi'),
    localDynamoDbEndpoint: app.node.tryGetContext('localDynamoDbEndpoint'),
  });
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
  return stack;
};

// `-c flag=true` arrives as a string, cdk.json gives a boolean; anything else is a typo that must
// not silently pick a side.
const booleanContext = (app: App, key: string): boolean => {
  const value: unknown = app.node.tryGetContext(key);
  if (value === undefined || value === false || value === 'false') return false;
  if (value === true || value === 'true') return true;
  throw new Error(`Context ${key} must be true or false, not ${JSON.stringify(value)}`);
};
