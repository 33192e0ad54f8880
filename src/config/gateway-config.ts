import { z } from 'zod';
import { MAX_TIMER_MS } from '../core/ports/clock.js';
import { ConfigInvalidError } from '../core/errors/index.js';
import { envVariable, integer, oneOf, text, url } from './env-variable.js';
import { loadClientConfig, toConfigError } from './load-config.js';
import type { ResolvedConfig } from './resolved-config.js';

/** How the gateway authenticates callers: bearer JWTs, or not at all (loopback only). */
export type GatewayAuthMode = 'jwt' | 'none';

/** The gateway's settings, resolved and checked once at start (docs/gateway.md, "Configuration"). */
export interface GatewayConfig {
  /** TCP port to listen on (`GATEWAY_PORT`, 8080; 0 picks a free one). */
  port: number;
  /** Bind address (`GATEWAY_HOST`, 127.0.0.1). */
  host: string;
  auth: {
    mode: GatewayAuthMode;
    /** HS256 secret, at least 32 bytes (`GATEWAY_JWT_SECRET`). */
    secret: string | null;
    /** Where the signing keys are (`GATEWAY_JWKS_URL`). */
    jwksUrl: string | null;
    /** Required `iss`, when set (`GATEWAY_JWT_ISSUER`). */
    issuer: string | null;
    /** Required `aud`, when set (`GATEWAY_JWT_AUDIENCE`). */
    audience: string | null;
  };
  /** Origins allowed by CORS (`GATEWAY_CORS_ORIGINS`); empty: no CORS headers at all. */
  corsOrigins: string[];
  /** Requests per minute per principal, or per IP without one (`GATEWAY_RATE_LIMIT`, 600). */
  rateLimitPerMinute: number;
  /** Largest request body in bytes (`GATEWAY_BODY_LIMIT_BYTES`, LOOPFLEET_MAX_INPUT_BYTES + 64 KiB). */
  bodyLimitBytes: number;
  /** Interval of the SSE heartbeat comment in ms (`GATEWAY_SSE_HEARTBEAT_MS`, 15000). */
  sseHeartbeatMs: number;
  /** Longest long-poll `?wait=` in ms (`GATEWAY_MAX_WAIT_MS`, 60000). */
  maxWaitMs: number;
}

const optionalText = envVariable<string | null>(null, text);

/** The gateway's variables: README, "Configuration". */
export const gatewaySchema = z.object({
  GATEWAY_PORT: envVariable(8080, integer({ min: 0, max: 65_535, expected: 'an integer from 0 to 65535' })),
  GATEWAY_HOST: envVariable('127.0.0.1', text),
  GATEWAY_AUTH: envVariable<GatewayAuthMode | null>(null, oneOf(['jwt', 'none'] as const)),
  GATEWAY_JWT_SECRET: optionalText,
  GATEWAY_JWKS_URL: envVariable<string | null>(null, url(['http:', 'https:'])),
  GATEWAY_JWT_ISSUER: optionalText,
  GATEWAY_JWT_AUDIENCE: optionalText,
  GATEWAY_CORS_ORIGINS: optionalText,
  GATEWAY_RATE_LIMIT: envVariable(600, integer({ min: 1, max: 10_000_000, expected: 'a positive integer (requests per minute)' })),
  GATEWAY_BODY_LIMIT_BYTES: envVariable<number | null>(null, integer({ min: 1024, max: 1_073_741_824, expected: 'an integer of at least 1024 (bytes)' })),
  GATEWAY_SSE_HEARTBEAT_MS: envVariable(15_000, integer({ min: 100, max: MAX_TIMER_MS, expected: 'an integer of at least 100 (milliseconds)' })),
  GATEWAY_MAX_WAIT_MS: envVariable(60_000, integer({ min: 0, max: 3_600_000, expected: 'an integer from 0 to 3600000 (milliseconds)' })),
});

/** Every variable the gateway reads besides the client's (the compose file passes them on). */
export const GATEWAY_VARIABLES: readonly string[] = Object.keys(gatewaySchema.shape);

const MIN_SECRET_BYTES = 32;

/** The client configuration (Postgres, Redis, queue) and the gateway's own, both validated. Throws `config.invalid`. */
export function loadGatewayConfig(env: NodeJS.ProcessEnv = process.env): { client: ResolvedConfig; gateway: GatewayConfig } {
  const client = loadClientConfig(env);
  const parsed = gatewaySchema.safeParse(env);
  if (!parsed.success) throw toConfigError(parsed.error.issues);
  return { client, gateway: resolveGateway(parsed.data, client.worker.maxInputBytes) };
}

function resolveGateway(env: z.output<typeof gatewaySchema>, maxInputBytes: number): GatewayConfig {
  const secret = env.GATEWAY_JWT_SECRET;
  const jwksUrl = env.GATEWAY_JWKS_URL;
  const mode = env.GATEWAY_AUTH ?? (secret !== null || jwksUrl !== null ? 'jwt' : 'none');
  if (secret !== null && Buffer.byteLength(secret) < MIN_SECRET_BYTES) {
    invalid('GATEWAY_JWT_SECRET', `must be at least ${MIN_SECRET_BYTES} bytes (the value is not shown)`);
  }
  if (secret !== null && jwksUrl !== null) invalid('GATEWAY_JWKS_URL', 'set GATEWAY_JWT_SECRET or GATEWAY_JWKS_URL, not both');
  if (mode === 'jwt' && secret === null && jwksUrl === null) invalid('GATEWAY_AUTH', 'jwt needs GATEWAY_JWT_SECRET or GATEWAY_JWKS_URL');
  if (mode === 'none' && !isLoopback(env.GATEWAY_HOST)) {
    invalid('GATEWAY_AUTH', `none is only allowed on a loopback GATEWAY_HOST (got "${env.GATEWAY_HOST}"): set GATEWAY_JWT_SECRET or GATEWAY_JWKS_URL`);
  }
  const origins = (env.GATEWAY_CORS_ORIGINS ?? '').split(',').map((origin) => origin.trim()).filter((origin) => origin !== '');
  return {
    port: env.GATEWAY_PORT,
    host: env.GATEWAY_HOST,
    auth: { mode, secret, jwksUrl, issuer: env.GATEWAY_JWT_ISSUER, audience: env.GATEWAY_JWT_AUDIENCE },
    corsOrigins: origins,
    rateLimitPerMinute: env.GATEWAY_RATE_LIMIT,
    bodyLimitBytes: env.GATEWAY_BODY_LIMIT_BYTES ?? maxInputBytes + 64 * 1024,
    sseHeartbeatMs: env.GATEWAY_SSE_HEARTBEAT_MS,
    maxWaitMs: env.GATEWAY_MAX_WAIT_MS,
  };
}

/** True for an address only this machine reaches: 127.0.0.0/8, ::1, localhost. */
export function isLoopback(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, '').toLowerCase();
  return bare === 'localhost' || bare === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(bare);
}

function invalid(variable: string, problem: string): never {
  throw new ConfigInvalidError(`Invalid configuration:\n  - ${variable}: ${problem}`, { details: { variables: [variable] } });
}
