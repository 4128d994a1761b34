/**
 * Stands in for `@aws-sdk/credential-provider-node` in the Lambda bundles (an esbuild alias in
 * ./bundling). Lambda hands a function its role's credentials in the environment
 * (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN), so the SDK's default chain never
 * gets past its first link there; the other links (SSO, INI profiles, credential_process, web
 * identity, container and instance metadata) and the STS, SSO and sign-in clients they build
 * (`@aws-sdk/nested-clients`) are 132 KB of each bundle that no invocation runs.
 * Outside Lambda a bundle (the bench, SAM, test/infra) finds credentials the same way: in the
 * environment, or, against DynamoDB Local with none there, the fixed ones of
 * functions/store/client.ts. A profile alone (AWS_PROFILE, SSO) does not reach a bundle; code run
 * through tsx (`npm start`, the tools, the tests) is not bundled and keeps the SDK's full chain.
 */
import { fromEnv } from '@aws-sdk/credential-provider-env';

type FromEnvInit = Parameters<typeof fromEnv>[0];

/** The SDK clients call `defaultProvider(config)` when no `credentials` were given. */
export const defaultProvider = (init: FromEnvInit = {}) => fromEnv(init);
