import { type CfnResource, Stack, Validations } from 'aws-cdk-lib';
import type { HttpApi, HttpStage } from 'aws-cdk-lib/aws-apigatewayv2';
import { Effect, ManagedPolicy, PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type { Construct } from 'constructs';
import { type AllocationsRouteKey, type BatchesRouteKey, routeKeys, splitRouteKey } from '../../functions/http/route-keys';
import { Part } from './part';

type RouteKey = AllocationsRouteKey | BatchesRouteKey;

/**
 * What each kind of caller may call, as access scopes (Shopify's `read_inventory`, commercetools'
 * API client scopes): a storefront sells, a warehouse keeps the stock, a reader reads. No kind is
 * given the whole API.
 */
export const CALLER_SCOPES = {
  /** Lines, whole orders and holds through checkout, an order's lines read: the allocations function's routes but the API's description; and a SKU's stock read. */
  storefront: [...routeKeys.allocations.filter((routeKey) => routeKey !== 'GET /openapi.json'), 'GET /skus/{sku}/stock'],
  /** Batches, a SKU's stock, locations, transfers and shipments: the batches function's routes. */
  warehouse: routeKeys.batches,
  /** Every route that changes nothing: the reads, and a promise, which plans a cart and writes nothing. */
  reader: Object.values(routeKeys)
    .flat()
    .filter((routeKey) => splitRouteKey(routeKey).method === 'GET' || routeKey === 'POST /promises'),
} satisfies Record<string, readonly RouteKey[]>;

export type CallerKind = keyof typeof CALLER_SCOPES;

/**
 * One IAM managed policy for each kind of caller, allowing `execute-api:Invoke` on its routes and
 * no other: an operator attaches it to the caller's role (the stack outputs each ARN).
 */
export class CallerPolicies extends Part {
  readonly policies: Readonly<Record<CallerKind, ManagedPolicy>>;

  constructor(scope: Construct, id: string, { api, stage }: { readonly api: HttpApi; readonly stage: HttpStage }) {
    super(scope, id);
    const policyOf = (kind: CallerKind, description: string) => {
      const resources = CALLER_SCOPES[kind].map((routeKey) => {
        const { method, path } = splitRouteKey(routeKey);
        // A path parameter matches any one value: its segment is a wildcard in the route's ARN.
        return api.arnForExecuteApi(method, path.replace(/\{[^}]+\}/g, '*'), stage.stageName);
      });
      const policy = new ManagedPolicy(this, `${kind[0]?.toUpperCase()}${kind.slice(1)}CallerPolicy`, {
        description,
        statements: [new PolicyStatement({ effect: Effect.ALLOW, actions: ['execute-api:Invoke'], resources })],
      });
      // cdk-nag names each wildcard resource, the API by its logical id, as the template writes it.
      const apiId = Stack.of(this).resolve((api.node.defaultChild as CfnResource).logicalId) as string;
      for (const routeKey of CALLER_SCOPES[kind].filter((key) => key.includes('{'))) {
        const { method, path } = splitRouteKey(routeKey);
        Validations.of(policy).acknowledge({
          id: `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:execute-api:<AWS::Region>:<AWS::AccountId>:<${apiId}>/${stage.stageName}/${method}${path.replace(/\{[^}]+\}/g, '*')}]`,
          reason: "The route's own ARN: its wildcards stand for its path parameters (an order id, a SKU), which any value may fill.",
        });
      }
      return policy;
    };
    this.policies = {
      storefront: policyOf('storefront', 'A storefront: allocate lines and whole orders, promise carts, hold stock through checkout, read orders and stock.'),
      warehouse: policyOf('warehouse', 'A warehouse: add and change batches, move stock between locations, ship orders, keep the locations, read stock.'),
      reader: policyOf('reader', 'A reader: every route that changes nothing, promises among them.'),
    };
  }
}
