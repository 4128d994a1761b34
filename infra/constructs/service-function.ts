import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Duration, RemovalPolicy, Validations } from 'aws-cdk-lib';
import { Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { ApplicationLogLevel, Architecture, LoggingFormat, Runtime, SystemLogLevel } from 'aws-cdk-lib/aws-lambda';
import { type BundlingOptions, NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';
import { SERVICE_NAME } from '../../functions/telemetry-names';
import { productionBundling } from '../bundling';

const repoRoot = fileURLToPath(new URL('../..', import.meta.url));

/** How every function logs: the deployment's choice (AllocationStackProps). */
export interface LogSettings {
  /** The least severe of the functions' own log lines that is written (POWERTOOLS_LOG_LEVEL). */
  readonly logLevel: ApplicationLogLevel;
  /** The share of invocations whose DEBUG lines are written whatever `logLevel` says. */
  readonly debugSampleRate: number;
}

export interface ServiceFunctionProps {
  /** The handler's source, from the repository's root. */
  readonly entry: string;
  readonly environment: Record<string, string>;
  readonly timeout: Duration;
  readonly logSettings: LogSettings;
  /** @default productionBundling */
  readonly bundling?: BundlingOptions;
}

/**
 * A function with its own role and log group, so each can be granted only what it uses: the
 * constructs `${name}Logs`, `${name}Role` and `${name}Function` in `scope`.
 */
export const serviceFunction = (
  scope: Construct,
  name: string,
  { entry, environment, timeout, logSettings, bundling = productionBundling }: ServiceFunctionProps,
): { fn: NodejsFunction; role: Role } => {
  const logGroup = new LogGroup(scope, `${name}Logs`, {
    // Enough to look back on an incident; CloudWatch's default keeps (and bills) them forever.
    retention: RetentionDays.ONE_MONTH,
    removalPolicy: RemovalPolicy.DESTROY,
  });
  // A role of our own: the default one carries the managed AWSLambdaBasicExecutionRole, which
  // may write to any log group in the account.
  const role = new Role(scope, `${name}Role`, {
    assumedBy: new ServicePrincipal('lambda.amazonaws.com'),
    description: `Runs the ${name} handler.`,
  });
  logGroup.grantWrite(role);

  // No X-Ray tracing: the tracing SDKs add 112-124 KB and 23-32 ms to a cold start and break the ESM bundle (docs/operations.md).
  const fn = new NodejsFunction(scope, `${name}Function`, {
    entry: join(repoRoot, entry),
    handler: 'handler',
    // Explicit, so that bundling does not depend on the directory `cdk` or a test runs from.
    projectRoot: repoRoot,
    depsLockFilePath: join(repoRoot, 'package-lock.json'),
    runtime: Runtime.NODEJS_22_X,
    // Graviton: about 20% cheaper per GB-second than x86, and the code has no native modules.
    architecture: Architecture.ARM_64,
    // More memory buys more CPU, which shortens the cold start; warm calls last tens of ms.
    memorySize: 512,
    timeout,
    role,
    logGroup,
    // Lambda's own lines (start, report, timeouts) as JSON too, so one query reads them with the handler's.
    loggingFormat: LoggingFormat.JSON,
    // Lambda's own filter lets every line through, and the Logger decides (POWERTOOLS_LOG_LEVEL and
    // its debug sampling, below): a level set here would win over both, and a sampled
    // invocation's DEBUG lines would be dropped (functions/telemetry.ts).
    applicationLogLevelV2: ApplicationLogLevel.DEBUG,
    // INFO keeps each invocation's report: duration, memory used and, for a cold start, its init
    // duration, the one record of cold starts in production without X-Ray.
    systemLogLevelV2: SystemLogLevel.INFO,
    environment: {
      ...environment,
      // Powertools' Logger reads these, so the handlers' logs carry the service's name, at the
      // level and with the debug sampling the deployment chose (docs/operations.md); the metrics'
      // names are functions/telemetry-names.ts's own. Lambda's FATAL is Powertools' CRITICAL.
      POWERTOOLS_SERVICE_NAME: SERVICE_NAME,
      POWERTOOLS_LOG_LEVEL: logSettings.logLevel === ApplicationLogLevel.FATAL ? 'CRITICAL' : logSettings.logLevel,
      POWERTOOLS_LOGGER_SAMPLE_RATE: String(logSettings.debugSampleRate),
    },
    // ESM, `module` entry points, minified, the AWS SDK bundled, source maps: each choice and its
    // reason are in ../bundling, shared with `npm run bench` so it measures what deploys.
    bundling,
  });
  Validations.of(fn).acknowledge({
    id: 'AwsSolutions-L1',
    reason:
      'Node.js 22 is the runtime the service is developed and tested on (node@22 in devDependencies); ' +
      'moving to a newer major is a deliberate change made together with the local toolchain.',
  });
  return { fn, role };
};
