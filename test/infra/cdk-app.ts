import { readFileSync } from 'node:fs';
import { App, type CfnElement, type Stack } from 'aws-cdk-lib';

/** The feature flags and settings `npm run synth` applies, so tests see the template it writes. */
const cdkJsonContext: Record<string, unknown> = JSON.parse(
  readFileSync(new URL('../../cdk.json', import.meta.url), 'utf8'),
).context;

/**
 * An App as `cdk synth` makes it, plus `context` (the `-c` flags). Without `bundle`, it neither
 * bundles the functions nor runs CloudFormation's validator: a synth takes 0.3 s instead of 7 s.
 */
export const cdkApp = (context: Record<string, unknown> = {}, { bundle = false } = {}): App =>
  new App({
    context: {
      ...cdkJsonContext,
      ...(bundle ? { 'aws:cdk:enable-asset-metadata': true } : { 'aws:cdk:bundling-stacks': [] }),
      ...context,
    },
    builtinCloudFormationValidation: false,
  });

/** The logical ID in the template of the resource behind a construct the stack names `id`. */
export const logicalIdOf = (stack: Stack, id: string): string =>
  stack.getLogicalId(stack.node.findChild(id).node.defaultChild as CfnElement);
