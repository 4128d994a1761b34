/**
 * Stands in for `@aws-sdk/middleware-endpoint-discovery` in the Lambda bundles (an esbuild alias in
 * ./bundling). The DynamoDB client resolves endpoint discovery's settings and builds its endpoint
 * cache (an LRU cache, `mnemonist`, about 6 KB of each bundle), but none of its commands discovers
 * an endpoint any more, so nothing reads the cache. The settings resolve here as there; the cache
 * is left out.
 */
const ENVIRONMENT_VARIABLES = ['AWS_ENABLE_ENDPOINT_DISCOVERY', 'AWS_ENDPOINT_DISCOVERY_ENABLED'];
const CONFIG_FILE_ENTRY = 'endpoint_discovery_enabled';
const enabled = (value: string | undefined) => value !== undefined && !['false', '0'].includes(value);

export const NODE_ENDPOINT_DISCOVERY_CONFIG_OPTIONS = {
  environmentVariableSelector: (env: Record<string, string | undefined>) => {
    const name = ENVIRONMENT_VARIABLES.find((variable) => variable in env);
    return name === undefined ? undefined : enabled(env[name]);
  },
  configFileSelector: (profile: Record<string, string | undefined>) => (CONFIG_FILE_ENTRY in profile ? enabled(profile[CONFIG_FILE_ENTRY]) : undefined),
  default: undefined,
};

interface EndpointDiscoveryInput {
  readonly endpointDiscoveryEnabled?: boolean;
  readonly endpointDiscoveryEnabledProvider: () => Promise<boolean | undefined>;
}

export const resolveEndpointDiscoveryConfig = <Input extends EndpointDiscoveryInput>(input: Input, { endpointDiscoveryCommandCtor }: { readonly endpointDiscoveryCommandCtor: unknown }) =>
  Object.assign(input, {
    endpointDiscoveryCommandCtor,
    endpointDiscoveryEnabled: input.endpointDiscoveryEnabled !== undefined ? () => Promise.resolve(input.endpointDiscoveryEnabled) : input.endpointDiscoveryEnabledProvider,
    isClientEndpointDiscoveryEnabled: input.endpointDiscoveryEnabled !== undefined,
  });
