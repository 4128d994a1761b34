import { Stack } from 'aws-cdk-lib';
import type { HttpStage } from 'aws-cdk-lib/aws-apigatewayv2';
import { Alarm, type Dashboard } from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import type { Table } from 'aws-cdk-lib/aws-dynamodb';
import type { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import type { Topic } from 'aws-cdk-lib/aws-sns';
import type { Construct } from 'constructs';
import { alarmTopic } from './monitoring/alarm-topic';
import { serviceDashboard } from './monitoring/dashboard';
import { type WatchedEvents, raiseEventAlarms } from './monitoring/event-alarms';
import type { RaiseAlarm } from './monitoring/raise-alarm';
import { type WatchedFunction, raiseServiceAlarms } from './monitoring/service-alarms';
import { raiseImportAlarm } from './monitoring/import-alarm';
import { raiseSweeperAlarm } from './monitoring/sweeper-alarm';
import type { StateMachine } from 'aws-cdk-lib/aws-stepfunctions';
import { Part } from './part';

export interface MonitoringProps {
  /** The API's stage: its requests, errors and each route's latency. */
  readonly stage: HttpStage;
  readonly table: Table;
  /** Every function, the HTTP handlers with their route keys and the stream consumer with none. */
  readonly functions: readonly WatchedFunction[];
  /** The domain events' delivery: the bus, its dead-letter queue and the stream consumer. */
  readonly events: WatchedEvents;
  /** The hold sweeper, whose falling behind has an alarm. */
  readonly sweeper: NodejsFunction;
  /** The state machine of imports, whose failed executions have an alarm. */
  readonly importEngine: StateMachine;
  /** The p99 latency of a route, in milliseconds, above which its alarm goes off. */
  readonly p99LatencyMs: number;
  /** An address subscribed to every alarm by e-mail (AllocationStackProps). */
  readonly alarmEmail?: string;
}

/**
 * What an operator watches: the alarm topic, the alarms on the domain events, the API, the
 * functions and the table, each of which notifies the topic, and the dashboard named after the
 * stack. Each alarm's description is the operator's first steps: the text of the e-mail.
 */
export class Monitoring extends Part {
  /** Every alarm, and its return to OK, is published here. */
  readonly alarmTopic: Topic;
  readonly dashboard: Dashboard;

  constructor(scope: Construct, id: string, { stage, table, functions, events, sweeper, importEngine, p99LatencyMs, alarmEmail }: MonitoringProps) {
    super(scope, id);
    const dashboardName = Stack.of(this).stackName;
    this.alarmTopic = alarmTopic(this, alarmEmail);
    const notifyTopic = new SnsAction(this.alarmTopic);
    const alarms: Alarm[] = [];
    const raise: RaiseAlarm = (alarmId, props) => {
      const alarm = new Alarm(this, alarmId, props);
      alarm.addAlarmAction(notifyTopic);
      alarm.addOkAction(notifyTopic);
      alarms.push(alarm);
    };
    const service = { stage, table, functions, p99LatencyMs, dashboardName };
    raiseEventAlarms(raise, events, dashboardName);
    raiseServiceAlarms(raise, service);
    raiseSweeperAlarm(raise, sweeper, dashboardName);
    raiseImportAlarm(raise, importEngine, dashboardName);
    this.dashboard = serviceDashboard(this, service, events, alarms);
  }
}
