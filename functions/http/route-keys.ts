/**
 * The API's routes, as API Gateway names them, by the function that serves them: each handler
 * routes on its own keys, and the CDK stack and the local server send each key to its function, so
 * the three cannot drift apart. A `{name}` segment is a path parameter.
 */
export const routeKeys = {
  batches: [
    'POST /add_batch',
    'GET /batches/{ref}',
    'PATCH /batches/{ref}',
    'GET /skus/{sku}/stock',
    'GET /skus/{sku}/history',
    'GET /skus',
    'GET /locations',
    'GET /locations/{id}',
    'GET /locations/{id}/stock',
    'PUT /locations/{id}',
    'POST /transfers',
    'GET /transfers/{transferid}',
    'DELETE /transfers/{transferid}',
    'POST /shipments',
    'GET /shipments/{shipmentid}',
    'POST /adjustments',
    'POST /imports',
    'GET /imports/{importid}',
    'GET /imports/{importid}/rows',
  ],
  allocations: [
    'POST /allocate',
    'POST /orders',
    'POST /promises',
    'GET /allocations/{orderid}',
    'DELETE /allocations/{orderid}/{sku}',
    'POST /holds',
    'GET /holds/{holdid}',
    'PATCH /holds/{holdid}',
    'DELETE /holds/{holdid}',
    'POST /holds/{holdid}/confirm',
    'GET /openapi.json',
  ],
} as const;

export type BatchesRouteKey = (typeof routeKeys.batches)[number];
export type AllocationsRouteKey = (typeof routeKeys.allocations)[number];

/** `GET /batches/{ref}` as its method and its path template. */
export const splitRouteKey = (routeKey: string): { readonly method: string; readonly path: string } => {
  const [method = '', path = ''] = routeKey.split(' ');
  return { method, path };
};

/** The names of a path template's parameters, in order: `/allocations/{orderid}/{sku}` has orderid and sku. */
export const pathParameterNames = (path: string): string[] =>
  path.split('/').flatMap((segment) => /^\{(.+)\}$/.exec(segment)?.slice(1) ?? []);
