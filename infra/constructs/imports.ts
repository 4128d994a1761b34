import { type CfnElement, Duration, RemovalPolicy, Stack } from 'aws-cdk-lib';
import type { Table } from 'aws-cdk-lib/aws-dynamodb';
import { Rule } from 'aws-cdk-lib/aws-events';
import { SfnStateMachine } from 'aws-cdk-lib/aws-events-targets';
import type { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import { BlockPublicAccess, Bucket, BucketEncryption, type CfnBucket, ObjectOwnership } from 'aws-cdk-lib/aws-s3';
import {
  Choice,
  Condition,
  DefinitionBody,
  DistributedMap,
  type IItemReader,
  ItemBatcher,
  JsonPath,
  LogLevel,
  S3CsvItemReader,
  S3JsonLItemReader,
  StateMachine,
  StateMachineType,
  Succeed,
  TaskInput,
} from 'aws-cdk-lib/aws-stepfunctions';
import { LambdaInvoke } from 'aws-cdk-lib/aws-stepfunctions-tasks';
import { Validations } from 'aws-cdk-lib';
import type { Construct } from 'constructs';
import { IMPORT_CHECK_ROWS, IMPORT_CHUNK_ROWS } from '../../domain/imports';
import { tableAccess } from '../../functions/store/table';
import { Part } from './part';
import { type LogSettings, serviceFunction } from './service-function';
import { grantTableAccess } from './table-access';

export interface ImportsProps {
  readonly table: Table;
  readonly logSettings: LogSettings;
  /** How many batches of rows are applied at once: the import's share of the table's write capacity (docs/capacity.md, "Imports"). */
  readonly applyConcurrency: number;
}

/** How many days a feed's file is kept once it has arrived: long enough to run and look into it, no longer. */
export const FEED_FILE_DAYS = 7;
/** How many batches of rows are checked at once: a check reads and writes little. */
const CHECK_CONCURRENCY = 40;

/**
 * Imports of files (docs/architecture.md, "Imports"): the bucket of feeds, which the batches
 * handler presigns PUTs to, and the engine that runs a feed once its file has arrived. S3 tells
 * EventBridge of the file; a rule starts the state machine on it. The state machine begins the
 * import, then reads the file twice with Distributed Map (Step Functions' own reader of JSON Lines
 * and CSV, streamed from S3, never held whole): once to check every row, a batch of
 * IMPORT_CHECK_ROWS at a time, and, unless that failed the import, once to apply them, a batch of
 * IMPORT_CHUNK_ROWS at a time, `applyConcurrency` batches at once; then it completes the import.
 * Every step is the import worker's (functions/import-worker.ts), recorded once, so that Step
 * Functions may run any again: a crashed or timed-out worker is retried, and a failed execution
 * can be redriven from where it stopped.
 */
export class Imports extends Part {
  readonly bucket: Bucket;
  readonly worker: NodejsFunction;
  readonly stateMachine: StateMachine;

  constructor(scope: Construct, id: string, { table, logSettings, applyConcurrency }: ImportsProps) {
    super(scope, id);
    this.bucket = new Bucket(this, 'FeedBucket', {
      encryption: BucketEncryption.S3_MANAGED,
      blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
      objectOwnership: ObjectOwnership.BUCKET_OWNER_ENFORCED,
      enforceSSL: true,
      lifecycleRules: [{ expiration: Duration.days(FEED_FILE_DAYS), abortIncompleteMultipartUploadAfter: Duration.days(1) }],
    });
    // S3 tells EventBridge of every object, set on the bucket itself: `eventBridgeEnabled` would add a function of CDK's to set it.
    (this.bucket.node.defaultChild as CfnBucket).notificationConfiguration = { eventBridgeConfiguration: { eventBridgeEnabled: true } };
    Validations.of(this.bucket).acknowledge({
      id: 'AwsSolutions-S1',
      reason: 'Who sends a feed is in the API access log (POST /imports answers each upload URL) and in CloudTrail; the bucket takes only those presigned PUTs.',
    });

    const { fn, role } = serviceFunction(this, 'ImportWorker', {
      entry: 'functions/import-worker.ts',
      environment: { TABLE_NAME: table.tableName, NODE_OPTIONS: '--enable-source-maps' },
      // A batch of rows takes a few seconds; a store that throttles is waited on, within this.
      timeout: Duration.minutes(2),
      logSettings,
    });
    grantTableAccess(role, table.tableArn, tableAccess.batches);
    this.worker = fn;

    const step = (name: string, payload: Record<string, unknown>) =>
      new LambdaInvoke(this, name, {
        lambdaFunction: fn,
        payload: TaskInput.fromObject(payload),
        payloadResponseOnly: true,
        resultPath: '$.step',
        // Every step is recorded once: running one again is safe, and a store that throttles is waited out.
        retryOnServiceExceptions: true,
      }).addRetry({ errors: ['States.ALL'], interval: Duration.seconds(2), backoffRate: 2, maxAttempts: 6 });
    const importid = JsonPath.stringAt('$.begun.importid');
    const readers: Record<'jsonl' | 'csv', (key: string) => IItemReader> = {
      jsonl: (key) => new S3JsonLItemReader({ bucket: this.bucket, key }),
      csv: (key) => new S3CsvItemReader({ bucket: this.bucket, key }),
    };
    const pass = (kind: 'check' | 'apply', format: 'jsonl' | 'csv') => {
      const map = new DistributedMap(this, `${kind === 'check' ? 'Check' : 'Apply'}${format === 'jsonl' ? 'JsonLines' : 'Csv'}`, {
        itemReader: readers[format](JsonPath.stringAt('$.detail.object.key')),
        itemSelector: { 'index.$': '$$.Map.Item.Index', 'fields.$': '$$.Map.Item.Value' },
        itemBatcher: new ItemBatcher({ maxItemsPerBatch: kind === 'check' ? IMPORT_CHECK_ROWS : IMPORT_CHUNK_ROWS, batchInput: { step: kind, importid, format } }),
        maxConcurrency: kind === 'check' ? CHECK_CONCURRENCY : applyConcurrency,
        mapExecutionType: StateMachineType.EXPRESS,
        resultPath: JsonPath.DISCARD,
        toleratedFailurePercentage: 0,
      });
      map.itemProcessor(
        new LambdaInvoke(this, `${map.node.id}Rows`, { lambdaFunction: fn, payloadResponseOnly: true, retryOnServiceExceptions: true }).addRetry({
          errors: ['States.ALL'],
          interval: Duration.seconds(2),
          backoffRate: 2,
          maxAttempts: 6,
        }),
      );
      return map;
    };

    const done = new Succeed(this, 'Done');
    const finish = step('Finish', { step: 'finish', importid }).next(done);
    const refuse = step('RefuseFile', { step: 'refuse', importid, cause: JsonPath.stringAt('$.readError.Cause') }).next(done);
    const apply = new Choice(this, 'ApplyRows?')
      .when(Condition.booleanEquals('$.step.run', false), done)
      .when(Condition.stringEquals('$.begun.format', 'csv'), pass('apply', 'csv').next(finish))
      .otherwise(pass('apply', 'jsonl').next(finish));
    const decide = step('Decide', { step: 'decide', importid }).next(apply);
    const check = (format: 'jsonl' | 'csv') => pass('check', format).addCatch(refuse, { errors: ['States.ItemReaderFailed'], resultPath: '$.readError' }).next(decide);
    const begin = new LambdaInvoke(this, 'Begin', {
      lambdaFunction: fn,
      payload: TaskInput.fromObject({
        step: 'begin',
        key: JsonPath.stringAt('$.detail.object.key'),
        etag: JsonPath.stringAt('$.detail.object.etag'),
        size: JsonPath.numberAt('$.detail.object.size'),
      }),
      payloadResponseOnly: true,
      resultPath: '$.begun',
      retryOnServiceExceptions: true,
    })
      .addRetry({ errors: ['States.ALL'], interval: Duration.seconds(2), backoffRate: 2, maxAttempts: 6 })
      .next(
        new Choice(this, 'RunRows?')
          .when(Condition.booleanEquals('$.begun.run', false), done)
          .when(Condition.stringEquals('$.begun.format', 'csv'), check('csv'))
          .otherwise(check('jsonl')),
      );

    this.stateMachine = new StateMachine(this, 'ImportStateMachine', {
      stateMachineType: StateMachineType.STANDARD,
      definitionBody: DefinitionBody.fromChainable(begin),
      comment: 'Runs an import once its file has arrived (infra/constructs/imports.ts).',
      // Its parent execution's events: a few steps and each Distributed Map's run, not a line a row.
      logs: { destination: new LogGroup(this, 'ImportStateMachineLogs', { retention: RetentionDays.ONE_MONTH, removalPolicy: RemovalPolicy.DESTROY }), level: LogLevel.ALL },
    });
    Validations.of(this.stateMachine).acknowledge({
      id: 'AwsSolutions-SF2',
      reason: 'No X-Ray, as for the functions (docs/operations.md, "Why no X-Ray"): each step logs its import and the execution its events.',
    });
    const stack = Stack.of(this);
    Validations.of(this.stateMachine).acknowledge({
      id: 'AwsSolutions-IAM5[Resource::*]',
      reason: 'The log delivery actions Step Functions needs to write its execution log (logs:CreateLogDelivery and the like) have no resource-level permissions.',
    });
    Validations.of(this.stateMachine).acknowledge({
      id: `AwsSolutions-IAM5[Resource::<${stack.getLogicalId(fn.node.defaultChild as CfnElement)}.Arn>:*]`,
      reason: "CDK's grant to invoke the worker names its versions and aliases too: the worker's own ARN, nothing else.",
    });
    const executions = `arn:<AWS::Partition>:states:<AWS::Region>:<AWS::AccountId>:execution:{"Fn::Select":[6,{"Fn::Split":[":",{"Ref":"${stack.getLogicalId(this.stateMachine.node.defaultChild as CfnElement)}"}]}]}`;
    for (const resource of [`${executions}:*`, `${executions}/*:*`]) {
      Validations.of(this.stateMachine).acknowledge({
        id: `AwsSolutions-IAM5[Resource::${resource}]`,
        reason: "The Distributed Map's grant to run and redrive its own child executions, which are named as they run: this state machine's executions only.",
      });
    }
    Validations.of(this.stateMachine).acknowledge({
      id: `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:s3:::<${stack.getLogicalId(this.bucket.node.defaultChild as CfnElement)}>/*]`,
      reason: "The Distributed Map's reader reads the file it is given, any key of the bucket of feeds: the bucket holds feeds only.",
    });

    new Rule(this, 'FeedArrived', {
      description: 'Starts the import of a feed once its file has arrived (infra/constructs/imports.ts).',
      eventPattern: {
        source: ['aws.s3'],
        detailType: ['Object Created'],
        detail: { bucket: { name: [this.bucket.bucketName] }, object: { key: [{ prefix: 'imports/' }] } },
      },
      targets: [new SfnStateMachine(this.stateMachine)],
    });
  }
}
