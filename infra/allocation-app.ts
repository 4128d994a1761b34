import { type App, Validations } from 'aws-cdk-lib';
import { ApplicationLogLevel } from 'aws-cdk-lib/aws-lambda';
import { AwsSolutionsChecks } from 'cdk-nag';
import { AllocationStack } from './allocation-stack';

/** The stack's name in CloudFormation, and so the name of its template in cdk.out. */
export const stackName = 'AllocationService';

/**
 * Puts the service's stack into `app`, configured from the app's context (`-c publicApi=true`,
 * `-c throttlingRateLimit=200 -c throttlingBurstLimit=400`, `-c localDynamoDbEndpoint=<url>`,
 * `-c logLevel=DEBUG`, `-c debugSampleRate=0.05`, `-c p99LatencyMs=800`, `-c alarmEmail=ops@example.com`, `-c historyRetentionDays=365`, `-c importConcurrency=20`), and makes every
 * synth run cdk-nag's AwsSolutions checks: any finding not acknowledged with a reason fails the synth.
 */
export const defineAllocationApp = (app: App): AllocationStack => {
  const stack = new AllocationStack(app, stackName, {
    publicApi: booleanContext(app, 'publicApi'),
    throttlingRateLimit: positiveIntegerContext(app, 'throttlingRateLimit'),
    throttlingBurstLimit: positiveIntegerContext(app, 'throttlingBurstLimit'),
    localDynamoDbEndpoint: app.node.tryGetContext('localDynamoDbEndpoint'),
    logLevel: logLevelContext(app, 'logLevel'),
    debugSampleRate: shareContext(app, 'debugSampleRate'),
    p99LatencyMs: positiveIntegerContext(app, 'p99LatencyMs'),
    alarmEmail: emailContext(app, 'alarmEmail'),
    historyRetentionDays: positiveIntegerContext(app, 'historyRetentionDays'),
    importConcurrency: positiveIntegerContext(app, 'importConcurrency'),
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

// `-c rate=0.05` arrives as a string, cdk.json gives a number; a share is from 0 to 1.
const shareContext = (app: App, key: string): number | undefined => {
  const value: unknown = app.node.tryGetContext(key);
  if (value === undefined) return undefined;
  const number = typeof value === 'string' && value.trim() !== '' ? Number(value) : value;
  if (typeof number === 'number' && number >= 0 && number <= 1) return number;
  throw new Error(`Context ${key} must be a number from 0 to 1, not ${JSON.stringify(value)}`);
};

/** Lambda's application log levels, from the most verbose. */
const logLevels = [
  ApplicationLogLevel.TRACE,
  ApplicationLogLevel.DEBUG,
  ApplicationLogLevel.INFO,
  ApplicationLogLevel.WARN,
  ApplicationLogLevel.ERROR,
  ApplicationLogLevel.FATAL,
];

// `-c logLevel=debug` is as good as DEBUG; a level Lambda does not know would fail the deploy, not the synth.
const logLevelContext = (app: App, key: string): ApplicationLogLevel | undefined => {
  const value: unknown = app.node.tryGetContext(key);
  if (value === undefined) return undefined;
  const level = logLevels.find((known) => typeof value === 'string' && known === value.toUpperCase());
  if (level) return level;
  throw new Error(`Context ${key} must be one of ${logLevels.join(', ')}, not ${JSON.stringify(value)}`);
};

// Only the shape: SNS itself finds out whether the address exists, by asking its owner to confirm.
const emailContext = (app: App, key: string): string | undefined => {
  const value: unknown = app.node.tryGetContext(key);
  if (value === undefined) return undefined;
  if (typeof value === 'string' && /^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(value)) return value;
  throw new Error(`Context ${key} must be an e-mail address, not ${JSON.stringify(value)}`);
};
