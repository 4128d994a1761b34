import { CfnOutput, type CfnElement, Stack, type StackProps, Validations } from 'aws-cdk-lib';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { ApplicationLogLevel } from 'aws-cdk-lib/aws-lambda';
import type { Construct } from 'constructs';
import { DomainEvents } from './constructs/domain-events';
import { HoldSweeper } from './constructs/hold-sweeper';
import { Imports } from './constructs/imports';
import { ServiceApi } from './constructs/http-api';
import { Monitoring } from './constructs/monitoring';
import { Part } from './constructs/part';
import { AllocationTable } from './constructs/table';
import { CallerPolicies } from './constructs/caller-policies';
import { DEFAULT_HISTORY_RETENTION_DAYS } from '../functions/store/stock-changes';

export interface AllocationStackProps extends StackProps {
  /**
   * Deploy the routes without authorization, for demos: anyone who has the URL can change stock.
   * @default false - every route requires IAM (SigV4) authorization
   */
  readonly publicApi?: boolean;
  /**
   * Steady-state requests per second the API accepts before answering 429.
   * Set with `-c throttlingRateLimit=<n>`.
   * @default 100 - bounds what the service costs and what a runaway client can do; it sits below
   * one SKU's partition ceiling (about 500 allocations/s) and near the per-item conflict ceiling of
   * a single hot SKU (roughly 50-100 allocations/s): see docs/capacity.md, Ceilings
   */
  readonly throttlingRateLimit?: number;
  /**
   * Requests the API accepts in a burst above the steady rate. Set with `-c throttlingBurstLimit=<n>`.
   * @default 200 - absorbs a client's retry storm without letting it last
   */
  readonly throttlingBurstLimit?: number;
  /**
   * Declares DYNAMODB_ENDPOINT on the functions, for `sam local` only: SAM's --env-vars can only
   * override variables the template declares. Never deploy a template synthesized with it.
   * @default - the variable is not declared, and the functions reach DynamoDB itself
   */
  readonly localDynamoDbEndpoint?: string;
  /**
   * The least severe of the functions' own log lines that is written (POWERTOOLS_LOG_LEVEL), but
   * for the invocations sampled at `debugSampleRate`. Set with `-c logLevel=DEBUG`.
   * @default ApplicationLogLevel.INFO - one line per request, and what goes wrong
   */
  readonly logLevel?: ApplicationLogLevel;
  /**
   * The share of invocations, 0 to 1, whose DEBUG lines are written whatever `logLevel` says
   * (POWERTOOLS_LOGGER_SAMPLE_RATE): the retried transactions and lost races of a sample of
   * requests, without the cost of DEBUG everywhere. Set with `-c debugSampleRate=0.05`.
   * @default 0.01
   */
  readonly debugSampleRate?: number;
  /**
   * The p99 latency of a route, in milliseconds, above which its alarm goes off. Set with
   * `-c p99LatencyMs=<n>`.
   * @default 1000 - about ten times a warm allocation's p99 under load (docs/performance.md)
   */
  readonly p99LatencyMs?: number;
  /**
   * An address that gets every alarm and its recovery by e-mail, once its owner confirms the
   * subscription. Set with `-c alarmEmail=ops@example.com`.
   * @default - no subscription: subscribe to the topic of the AlarmTopicArn output yourself
   */
  readonly alarmEmail?: string;
  /**
   * How many days the history keeps each change of stock (docs/api.md, "History"), at least 31: a
   * count is applied as of its time for 30 days, from the same records. Set with
   * `-c historyRetentionDays=<days>`; it applies to the changes written after it.
   * @default 90
   */
  readonly historyRetentionDays?: number;
  /**
   * How many batches of a feed's rows are applied at once (docs/capacity.md, "Imports"): each runs
   * one row after another, a few writes a row. Set with `-c importConcurrency=<n>`.
   * @default 10 - about 200 rows/s, well within an on-demand table's capacity beside the API's traffic
   */
  readonly importConcurrency?: number;
}

/** About 2,900 WRU/s of new batches: under the 4,000 a new on-demand table serves at once, with room for the API's traffic (docs/capacity.md, "Imports"). */
const DEFAULT_IMPORT_CONCURRENCY = 4;

/**
 * The allocation service: its table, the HTTP API that changes it, the domain events its changes
 * become, and what an operator watches of them (infra/constructs, one construct each).
 */
export class AllocationStack extends Stack {
  readonly table: AllocationTable;
  readonly api: ServiceApi;
  readonly events: DomainEvents;
  readonly sweeper: HoldSweeper;
  readonly imports: Imports;
  readonly monitoring: Monitoring;
  readonly callers: CallerPolicies;

  constructor(scope: Construct, id: string, props: AllocationStackProps = {}) {
    super(scope, id, props);
    const logSettings = { logLevel: props.logLevel ?? ApplicationLogLevel.INFO, debugSampleRate: props.debugSampleRate ?? 0.01 };

    this.table = new AllocationTable(this, 'Table');
    this.api = new ServiceApi(this, 'HttpApi', {
      table: this.table,
      publicApi: props.publicApi ?? false,
      throttling: { rateLimit: props.throttlingRateLimit ?? 100, burstLimit: props.throttlingBurstLimit ?? 200 },
      localDynamoDbEndpoint: props.localDynamoDbEndpoint,
      historyRetentionDays: props.historyRetentionDays ?? DEFAULT_HISTORY_RETENTION_DAYS,
      logSettings,
    });
    this.events = new DomainEvents(this, 'DomainEvents', { table: this.table, logSettings });
    this.sweeper = new HoldSweeper(this, 'HoldSweeper', { table: this.table, logSettings });
    this.imports = new Imports(this, 'Imports', { table: this.table, logSettings, applyConcurrency: props.importConcurrency ?? DEFAULT_IMPORT_CONCURRENCY });
    // POST /imports presigns the PUT of a feed's file with the batches handler's own credentials: its role may put a feed, and nothing else of the bucket.
    const batches = this.api.handlers.find(({ name }) => name === 'Batches');
    if (!batches) throw new Error('The HTTP API has no Batches handler');
    batches.fn.addEnvironment('IMPORT_BUCKET', this.imports.bucket.bucketName);
    batches.fn.addToRolePolicy(new PolicyStatement({ actions: ['s3:PutObject'], resources: [this.imports.bucket.arnForObjects('imports/*')] }));
    Validations.of(batches.fn.role ?? batches.fn).acknowledge({
      id: `AwsSolutions-IAM5[Resource::<${this.getLogicalId(this.imports.bucket.node.defaultChild as CfnElement)}.Arn>/imports/*]`,
      reason: 'The URLs POST /imports presigns put one file each, under imports/: any import may be next, so the key is a pattern.',
    });
    this.monitoring = new Monitoring(this, 'Monitoring', {
      stage: this.api.stage,
      table: this.table,
      functions: [
        ...this.api.handlers.map((handler) => ({ ...handler, invokedBy: 'api' as const })),
        { name: 'PublishEvents', fn: this.events.consumer, invokedBy: 'stream', routeKeys: [] },
        { name: 'SweepHolds', fn: this.sweeper.fn, invokedBy: 'schedule', routeKeys: [] },
        { name: 'ImportWorker', fn: this.imports.worker, invokedBy: 'stateMachine', routeKeys: [] },
      ],
      events: this.events,
      sweeper: this.sweeper.fn,
      importEngine: this.imports.stateMachine,
      p99LatencyMs: props.p99LatencyMs ?? 1000,
      alarmEmail: props.alarmEmail,
    });

    this.callers = new CallerPolicies(this, 'Callers', { api: this.api.api, stage: this.api.stage });

    new CfnOutput(this, 'ApiUrl', { value: this.api.stage.url, description: 'Base URL of the HTTP API.' });
    new CfnOutput(this, 'TableName', { value: this.table.tableName, description: 'The DynamoDB table.' });
    new CfnOutput(this, 'FeedBucketName', { value: this.imports.bucket.bucketName, description: 'The bucket the files of imports are sent to, through the URLs POST /imports answers.' });
    new CfnOutput(this, 'ImportStateMachineArn', { value: this.imports.stateMachine.stateMachineArn, description: 'The state machine that runs an import once its file has arrived.' });
    new CfnOutput(this, 'EventBusName', { value: this.events.bus.eventBusName, description: 'The bus the domain events are put on.' });
    new CfnOutput(this, 'EventBusArn', { value: this.events.bus.eventBusArn, description: 'The ARN of the bus the domain events are put on.' });
    new CfnOutput(this, 'EventsDeadLetterQueueUrl', {
      value: this.events.deadLetters.queueUrl,
      description: 'Pointers to the stream records whose events could not be published.',
    });
    new CfnOutput(this, 'AlarmTopicArn', {
      value: this.monitoring.alarmTopic.topicArn,
      description: 'Every alarm of the service and its return to OK are published here.',
    });
    new CfnOutput(this, 'StorefrontPolicyArn', {
      value: this.callers.policies.storefront.managedPolicyArn,
      description: "Attach to a storefront's role: allocate, orders, holds, and reading orders and stock.",
    });
    new CfnOutput(this, 'WarehousePolicyArn', {
      value: this.callers.policies.warehouse.managedPolicyArn,
      description: "Attach to a warehouse's role: batches, transfers, shipments, locations, and reading stock.",
    });
    new CfnOutput(this, 'ReaderPolicyArn', {
      value: this.callers.policies.reader.managedPolicyArn,
      description: "Attach to a reader's role: every route that changes nothing.",
    });
    new CfnOutput(this, 'DashboardUrl', {
      value: `https://${this.region}.console.aws.amazon.com/cloudwatch/home?region=${this.region}#dashboards:name=${this.monitoring.dashboard.dashboardName}`,
      description: 'The CloudWatch dashboard: alarms, API, allocations, table, events, functions.',
    });
  }

  /**
   * CDK makes a resource's logical id from its path in the stack. The stack was one flat construct
   * until its parts (./constructs/part.ts) became constructs of their own, so their ids are left out
   * of that path: every resource keeps the logical id it had, and an upgrade of a deployed stack
   * replaces none of them, the table, the bus, the queue and the log groups with their logs included
   * (test/infra/allocation-stack.test.ts pins them).
   */
  protected override allocateLogicalId(element: CfnElement): string {
    const scopes = element.node.scopes.filter((scope) => !(scope instanceof Part));
    // CDK's own naming, which reads the element's scopes and its stack, given the path without the parts.
    const withoutParts: CfnElement = Object.create(element, { node: { value: { scopes } } });
    return super.allocateLogicalId(withoutParts);
  }
}
