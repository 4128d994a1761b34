import { describe, expect, it } from 'vitest';
import { SERVICE_NAME } from '../../../functions/telemetry-names';
import { logicalIdOf } from '../cdk-app';
import { type Synthesized, functionNamed, synthesize } from '../synthesized';

const synthesized = synthesize();
const { stack, template } = synthesized;

describe.each([{ name: 'Batches' }, { name: 'Allocations' }, { name: 'PublishEvents' }])('the $name function', ({ name }) => {
  it('runs index.handler on Node.js 22 on arm64', () => {
    expect(functionNamed(synthesized, name).Properties).toMatchObject({
      Runtime: 'nodejs22.x',
      Architectures: ['arm64'],
      Handler: 'index.handler',
    });
  });

  it('logs to a log group of its own that expires', () => {
    const logGroup = logicalIdOf(stack, `${name}Logs`);
    expect(functionNamed(synthesized, name).Properties.LoggingConfig).toMatchObject({ LogGroup: { Ref: logGroup } });
    expect(template.toJSON().Resources[logGroup].Properties.RetentionInDays).toBeGreaterThan(0);
  });

  it("logs JSON, Lambda's filter letting every line through to the Logger's level, and Lambda's with each invocation's report", () => {
    expect(functionNamed(synthesized, name).Properties.LoggingConfig).toEqual({
      LogGroup: { Ref: logicalIdOf(stack, `${name}Logs`) },
      LogFormat: 'JSON',
      ApplicationLogLevel: 'DEBUG',
      SystemLogLevel: 'INFO',
    });
  });

  it('logs from INFO up, 1% of invocations at DEBUG, under the names the alarms and the dashboard read', () => {
    expect(functionNamed(synthesized, name).Properties.Environment.Variables).toMatchObject({
      POWERTOOLS_SERVICE_NAME: SERVICE_NAME,
      POWERTOOLS_LOG_LEVEL: 'INFO',
      POWERTOOLS_LOGGER_SAMPLE_RATE: '0.01',
    });
  });

  it('has no X-Ray active tracing', () => {
    expect(functionNamed(synthesized, name).Properties.TracingConfig).toBeUndefined();
  });
});

describe('the log level', () => {
  const variable = (withContext: Synthesized, name: string) =>
    ['Batches', 'Allocations', 'PublishEvents'].map((fn) => functionNamed(withContext, fn).Properties.Environment.Variables[name]);

  it.each(['WARN', 'warn'])('of every function is -c logLevel=%s', (logLevel) => {
    expect(variable(synthesize({ logLevel }), 'POWERTOOLS_LOG_LEVEL')).toEqual(['WARN', 'WARN', 'WARN']);
  });

  it("is Powertools' CRITICAL for Lambda's FATAL", () => {
    expect(variable(synthesize({ logLevel: 'FATAL' }), 'POWERTOOLS_LOG_LEVEL')).toEqual(['CRITICAL', 'CRITICAL', 'CRITICAL']);
  });

  it('samples -c debugSampleRate of the invocations at DEBUG', () => {
    expect(variable(synthesize({ debugSampleRate: '0.25' }), 'POWERTOOLS_LOGGER_SAMPLE_RATE')).toEqual(['0.25', '0.25', '0.25']);
  });

  it.each(['1.5', '-0.1', 'often', ''])('refuses -c debugSampleRate=%o, which is not a share', (debugSampleRate) => {
    expect(() => synthesize({ debugSampleRate })).toThrow(/debugSampleRate must be a number from 0 to 1/);
  });

  it.each(['verbose', '', 3, true])('refuses -c logLevel=%o, which Lambda does not know', (logLevel) => {
    expect(() => synthesize({ logLevel })).toThrow(/logLevel must be one of TRACE, DEBUG, INFO, WARN, ERROR, FATAL/);
  });
});

describe("the functions' roles", () => {
  it('are assumable by Lambda only, with no managed or inline policies', () => {
    const roles = Object.keys(template.findResources('AWS::IAM::Role'));
    const functionRoles = ['Batches', 'Allocations', 'PublishEvents', 'SweepHolds', 'ImportWorker'].map((name) => logicalIdOf(stack, `${name}Role`));
    // The others are the state machine of imports' own, and its rule's, which starts it.
    expect(roles.filter((role) => !role.startsWith('ImportStateMachine')).sort()).toEqual(functionRoles.sort());
    for (const role of functionRoles.map((id) => template.toJSON().Resources[id])) {
      expect(role.Properties.AssumeRolePolicyDocument.Statement).toEqual([
        { Action: 'sts:AssumeRole', Effect: 'Allow', Principal: { Service: 'lambda.amazonaws.com' } },
      ]);
      expect(role.Properties.ManagedPolicyArns).toBeUndefined();
      expect(role.Properties.Policies).toBeUndefined();
    }
  });

  it('grant no wildcard action', () => {
    const actions = Object.values(template.findResources('AWS::IAM::Policy')).flatMap((policy) =>
      policy.Properties.PolicyDocument.Statement.flatMap((statement: { Action: string | string[] }) => statement.Action),
    );
    expect(actions.filter((action) => action.includes('*'))).toEqual([]);
  });
});
