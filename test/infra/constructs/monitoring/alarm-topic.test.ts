import { describe, expect, it } from 'vitest';
import { logicalIdOf } from '../../cdk-app';
import { synthesize } from '../../synthesized';

const { stack, template } = synthesize();

describe('the alarm topic', () => {
  const alarmTopic = logicalIdOf(stack.monitoring, 'AlarmTopic');
  const key = logicalIdOf(stack.monitoring, 'AlarmTopicKey');

  it('is encrypted with a key of the stack that rotates and that CloudWatch may use, as it cannot use SNS\'s own', () => {
    expect(template.toJSON().Resources[alarmTopic].Properties.KmsMasterKeyId).toEqual({ 'Fn::GetAtt': [key, 'Arn'] });
    const { Properties } = template.toJSON().Resources[key];
    expect(Properties.EnableKeyRotation).toBe(true);
    expect(Properties.KeyPolicy.Statement).toContainEqual({
      Effect: 'Allow',
      Principal: { Service: 'cloudwatch.amazonaws.com' },
      Action: ['kms:Decrypt', 'kms:GenerateDataKey*'],
      Resource: '*',
    });
  });

  it("refuses publishing without TLS, and lets the account's alarms publish", () => {
    const [policy, ...others] = Object.values(template.findResources('AWS::SNS::TopicPolicy'));
    expect(others).toEqual([]);
    expect(policy?.Properties.Topics).toEqual([{ Ref: alarmTopic }]);
    expect(policy?.Properties.PolicyDocument.Statement).toEqual([
      expect.objectContaining({
        Effect: 'Deny',
        Principal: '*',
        Action: 'sns:Publish',
        Condition: { Bool: { 'aws:SecureTransport': 'false' } },
      }),
      expect.objectContaining({
        Effect: 'Allow',
        Principal: { Service: 'cloudwatch.amazonaws.com' },
        Action: 'sns:Publish',
        Resource: { Ref: alarmTopic },
        Condition: {
          ArnLike: {
            'aws:SourceArn': {
              'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ':cloudwatch:', { Ref: 'AWS::Region' }, ':', { Ref: 'AWS::AccountId' }, ':alarm:*']],
            },
          },
        },
      }),
    ]);
  });

  it('is an output, for subscribing to it', () => {
    expect(template.toJSON().Outputs.AlarmTopicArn.Value).toEqual({ Ref: alarmTopic });
  });

  it('e-mails the address of -c alarmEmail, and no one without it', () => {
    expect(template.findResources('AWS::SNS::Subscription')).toEqual({});
    const subscribed = synthesize({ alarmEmail: 'ops@example.com' });
    expect(Object.values(subscribed.template.findResources('AWS::SNS::Subscription')).map(({ Properties }) => Properties)).toEqual([
      { Protocol: 'email', Endpoint: 'ops@example.com', TopicArn: { Ref: logicalIdOf(subscribed.stack.monitoring, 'AlarmTopic') } },
    ]);
  });

  it.each(['ops', 'ops@example', '@example.com', 'ops @example.com', '', true])(
    'refuses -c alarmEmail=%o, which is not an e-mail address',
    (alarmEmail) => {
      expect(() => synthesize({ alarmEmail })).toThrow(/alarmEmail must be an e-mail address/);
    },
  );
});
