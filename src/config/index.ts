export * from './resolved-config.js';
export { DEFAULT_MODEL, defaultLogFormat, loadClientConfig, loadConfig } from './load-config.js';
export { configSummary } from './config-summary.js';
export { redactUrl, serverAddress, urlSecrets } from './redact-url.js';
export { configuredSecrets } from './configured-secrets.js';
export { envSchema, type ParsedEnv } from './env-schema.js';
export { GATEWAY_VARIABLES, isLoopback, loadGatewayConfig, type GatewayAuthMode, type GatewayConfig } from './gateway-config.js';
