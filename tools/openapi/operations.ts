/**
 * Every route as docs/openapi.json describes it: what it takes, and each answer it can give, with
 * when, in the words of docs/api.md (the batches function's in batch-operations.ts, the allocations
 * function's in allocation-operations.ts), after the answers every route shares (answers.ts).
 */
import { pathParameterNames, splitRouteKey } from '../../functions/http/route-keys';
import { allocationOperations } from './allocation-operations';
import { type Answer, type Operation, type RouteKey, answersBeforeTheFunction, bodyAnswers, failureAnswers, noQueryAnswers, pathParameterAnswers, queryAnswers } from './answers';
import { batchOperations } from './batch-operations';

export { type Answer, HEADERS, JSON_MEDIA_TYPE, type Operation, type RouteKey } from './answers';

export const operations: Readonly<Record<RouteKey, Operation>> = { ...batchOperations, ...allocationOperations };

/** Every answer of the route, in the order of the checks that lead to them; `allowed` is the methods its path takes. */
export const answersOf = (routeKey: RouteKey, allowed: readonly string[]): Answer[] => {
  const operation = operations[routeKey];
  return [
    ...answersBeforeTheFunction(allowed),
    ...pathParameterAnswers(pathParameterNames(splitRouteKey(routeKey).path)),
    ...(operation.query ? queryAnswers(operation.query) : noQueryAnswers()),
    ...(operation.requestBody ? bodyAnswers(operation.requestBody.schema, operation.requestBody.refused) : []),
    ...operation.answers,
    ...(operation.failures ?? failureAnswers()),
  ];
};

