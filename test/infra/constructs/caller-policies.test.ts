import { describe, expect, it } from 'vitest';
import { routeKeys, splitRouteKey } from '../../../functions/http/route-keys';
import { CALLER_SCOPES, type CallerKind } from '../../../infra/constructs/caller-policies';
import { logicalIdOf } from '../cdk-app';
import { synthesize } from '../synthesized';

const synthesized = synthesize();
const { stack, template } = synthesized;
const apiId = logicalIdOf(stack, 'Api');

interface Statement {
  readonly Effect: string;
  readonly Action: string | string[];
  readonly Resource: unknown[];
}

/** A resource of a policy as `METHOD /path` (a path parameter a `*`), when it is a route of this API's stage. */
const routeOf = (resource: unknown): string | undefined => {
  const parts = (resource as { 'Fn::Join'?: [string, unknown[]] })['Fn::Join']?.[1] ?? [];
  const onThisApi = parts.some((part) => JSON.stringify(part) === JSON.stringify({ Ref: apiId }));
  const tail = /^\/\$default\/([A-Z*]+)(\/.*)$/.exec(String(parts.at(-1)));
  return onThisApi && tail ? `${tail[1]} ${tail[2]}` : undefined;
};

const asArn = (routeKey: string) => {
  const { method, path } = splitRouteKey(routeKey);
  return `${method} ${path.replace(/\{[^}]+\}/g, '*')}`;
};

/** The statements of the managed policy of a kind of caller. */
const statementsOf = (kind: CallerKind): Statement[] => {
  const policies = template.findResources('AWS::IAM::ManagedPolicy');
  const policy = policies[logicalIdOf(stack, `${kind[0]?.toUpperCase()}${kind.slice(1)}CallerPolicy`)];
  return (policy?.Properties.PolicyDocument.Statement ?? []) as Statement[];
};

const routesGranted = (kind: CallerKind) => statementsOf(kind).flatMap(({ Resource }) => Resource.map(routeOf));

const kinds = Object.keys(CALLER_SCOPES) as CallerKind[];
const allRoutes = Object.values(routeKeys).flat();

describe.each(kinds)("the %s's policy", (kind) => {
  it('allows execute-api:Invoke on exactly its routes, each on this API and stage', () => {
    expect(statementsOf(kind).map(({ Effect, Action }) => [Effect, Action])).toEqual([['Allow', 'execute-api:Invoke']]);
    expect(routesGranted(kind).sort()).toEqual(CALLER_SCOPES[kind].map(asArn).sort());
  });

  it('grants no route of the others that its kind of caller has no use for, nor the whole API', () => {
    const own = new Set<string>(CALLER_SCOPES[kind]);
    const notOwn = allRoutes.filter((routeKey) => !own.has(routeKey)).map(asArn);
    expect(routesGranted(kind).filter((route) => notOwn.includes(route as string))).toEqual([]);
    expect(routesGranted(kind).some((route) => route === undefined || route.startsWith('*') || route.endsWith(' /*'))).toBe(false);
    expect(CALLER_SCOPES[kind].length).toBeLessThan(allRoutes.length);
  });

  it('is an output of the stack, for an operator to attach to a role', () => {
    const outputs = template.toJSON().Outputs as Record<string, { Value: unknown }>;
    const name = `${kind[0]?.toUpperCase()}${kind.slice(1)}PolicyArn`;
    expect(outputs[name]?.Value).toEqual({ Ref: logicalIdOf(stack, `${kind[0]?.toUpperCase()}${kind.slice(1)}CallerPolicy`) });
  });
});

describe('the kinds of caller', () => {
  it('keep the storefront off stock-keeping, the warehouse off selling, and the reader off every change but a promise', () => {
    const granted = (kind: CallerKind) => new Set(routesGranted(kind));
    expect(['POST /add_batch', 'PATCH /batches/*', 'POST /transfers', 'DELETE /transfers/*', 'PUT /locations/*'].filter((route) => granted('storefront').has(route))).toEqual([]);
    expect(['POST /allocate', 'POST /orders', 'POST /holds', 'POST /holds/*/confirm', 'DELETE /allocations/*/*'].filter((route) => granted('warehouse').has(route))).toEqual([]);
    expect([...granted('reader')].filter((route) => !route?.startsWith('GET '))).toEqual(['POST /promises']);
    expect(granted('reader').size).toBe(allRoutes.filter((routeKey) => splitRouteKey(routeKey).method === 'GET').length + 1);
    expect(granted('storefront').has('POST /promises')).toBe(true);
  });
});
