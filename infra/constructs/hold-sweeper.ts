import { Duration } from 'aws-cdk-lib';
import type { Table } from 'aws-cdk-lib/aws-dynamodb';
import { Rule, Schedule } from 'aws-cdk-lib/aws-events';
import { LambdaFunction } from 'aws-cdk-lib/aws-events-targets';
import type { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import type { Construct } from 'constructs';
import { tableAccess } from '../../functions/store/table';
import { Part } from './part';
import { type LogSettings, serviceFunction } from './service-function';
import { grantTableAccess } from './table-access';

export interface HoldSweeperProps {
  readonly table: Table;
  readonly logSettings: LogSettings;
}

/**
 * The function that ends expired holds (functions/sweep-holds.ts), run by a schedule every minute
 * whether or not any request comes. An EventBridge rule rather than a stream or a TTL trigger: a
 * hold's expiry is a moment, not a write, so nothing on the table marks it, and DynamoDB's time to
 * live deletes up to days late. Once a minute is enough because nothing waits on the sweeper: an
 * expired hold's units are free the moment it expires (docs/api.md, "Holds"); the sweeper ends
 * its record and tidies its batches. Least privilege like the other functions: the active holds'
 * index, the holds and the batches (a spread batch's pieces read only), UpdateItem only, naming only
 * what ending a hold writes.
 */
export class HoldSweeper extends Part {
  readonly fn: NodejsFunction;

  constructor(scope: Construct, id: string, { table, logSettings }: HoldSweeperProps) {
    super(scope, id);
    const { fn, role } = serviceFunction(this, 'SweepHolds', {
      entry: 'functions/sweep-holds.ts',
      environment: { TABLE_NAME: table.tableName, NODE_OPTIONS: '--enable-source-maps' },
      // A sweep runs until no expired hold is left, or until 10 s before this (functions/sweep-holds.ts), when it
      // stops, reports what it ended and succeeds; the next one continues.
      timeout: Duration.seconds(50),
      logSettings,
    });
    grantTableAccess(role, table.tableArn, tableAccess.sweeper);
    // Lambda would otherwise run a failed sweep again 1 and 2 minutes later, and keep a throttled one
    // for up to 6 hours, beside the scheduled ones: the next minute's sweep is the retry.
    fn.configureAsyncInvoke({ retryAttempts: 0, maxEventAge: Duration.minutes(1) });
    this.fn = fn;
    new Rule(this, 'SweepHoldsSchedule', {
      description: 'Ends expired holds every minute (functions/sweep-holds.ts).',
      schedule: Schedule.rate(Duration.minutes(1)),
      // No retry by the rule either: the next minute's sweep is the retry, and two sweeps at once would race for the same holds.
      targets: [new LambdaFunction(fn, { retryAttempts: 0 })],
    });
  }
}
