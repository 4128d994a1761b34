import { type App, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { AllocationStack } from './allocation-stack';

/** The stack's name in CloudFormation, and so the name of its template in cdk.out. */
export const stackName = 'AllocationService';

/**
 * Puts the service's stack into `app`, configured from the app's context (`-c publicApi=true`,
 * `-c throttlingRateLimit=200 -c throttlingBurstLimit=400`, `-c localDynamoDbEndpoint=<url>`), and
 * makes every synth run cdk-nag's AwsSolutions checks: any finding not acknowledged with a reason
 * fails the synth.
 */
export const defineAllocationApp = (app: App): AllocationStack => {
  const stack = new AllocationStack(app, stackName, {
    publicApi: booleanContext(app, 'publicApi'),
    throttlingRateLimit: positiveIntegerContext(app, 'throttlingRateLimit'),
    throttlingBurstLimit: positiveIntegerContext(app, 'throttlingBurstLimit'),
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

// `-c limit=200` arrives as a string, cdk.json gives a number; absent leaves the stack's default.
const positiveIntegerContext = (app: App, key: string): number | undefined => {
  const value: unknown = app.node.tryGetContext(key);
  if (value === undefined) return undefined;
  const number = typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : value;
  if (typeof number === 'number' && Number.isSafeInteger(number) && number > 0) return number;
  throw new Error(`Context ${key} must be a positive integer, not ${JSON.stringify(value)}`);
};
