import { createRemoteJWKSet, errors as joseErrors, jwtVerify, type JWTVerifyGetKey, type JWTVerifyOptions } from 'jose';
import { AuthExpiredError, AuthInvalidTokenError, AuthMissingTokenError, InfrastructureError } from '../../core/errors/index.js';
import type { GatewayConfig } from '../../config/gateway-config.js';
import { LOOPBACK_PRINCIPAL, type Principal } from '../principal.js';
import { principalFromClaims } from './principal-claims.js';

/** Turns a request's `Authorization` header into its principal, or throws a typed `auth.*` error. */
export type TokenVerifier = (authorization: string | undefined) => Promise<Principal>;

/**
 * The verifier of `GATEWAY_AUTH`: with `none`, everyone is the {@link LOOPBACK_PRINCIPAL}; with `jwt`,
 * `Authorization: Bearer <jwt>` checked by jose against the HS256 secret or the JWKS (fetched and
 * cached by `createRemoteJWKSet`), with `exp` and the optional issuer and audience.
 */
export function createTokenVerifier(auth: GatewayConfig['auth']): TokenVerifier {
  if (auth.mode === 'none') return async () => LOOPBACK_PRINCIPAL;
  const options: JWTVerifyOptions = {};
  if (auth.issuer !== null) options.issuer = auth.issuer;
  if (auth.audience !== null) options.audience = auth.audience;
  let key: Uint8Array | JWTVerifyGetKey;
  if (auth.secret !== null) {
    key = new TextEncoder().encode(auth.secret);
    options.algorithms = ['HS256'];
  } else if (auth.jwksUrl !== null) {
    key = createRemoteJWKSet(new URL(auth.jwksUrl));
  } else {
    throw new AuthInvalidTokenError('GATEWAY_AUTH=jwt without a secret or a JWKS URL');
  }
  return async (authorization) => {
    const token = bearerToken(authorization);
    try {
      const { payload } = typeof key === 'function' ? await jwtVerify(token, key, options) : await jwtVerify(token, key, options);
      return principalFromClaims(payload);
    } catch (error) {
      throw toAuthError(error);
    }
  };
}

function bearerToken(authorization: string | undefined): string {
  if (authorization === undefined || authorization.trim() === '') throw new AuthMissingTokenError('Authorization: Bearer <token> is required');
  const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
  if (match === null) throw new AuthInvalidTokenError('Authorization must be "Bearer <token>"');
  return match[1]!;
}

function toAuthError(error: unknown): Error {
  if (error instanceof AuthInvalidTokenError) return error;
  if (error instanceof joseErrors.JWTExpired) return new AuthExpiredError('token has expired');
  // The keys could not be fetched: the gateway's trouble, not the caller's.
  if (error instanceof joseErrors.JWKSTimeout || !(error instanceof joseErrors.JOSEError)) {
    return new InfrastructureError('token keys could not be loaded', { cause: error });
  }
  if (error instanceof joseErrors.JWTClaimValidationFailed) return new AuthInvalidTokenError(`token claim "${error.claim}" is not accepted`);
  return new AuthInvalidTokenError('token is malformed or its signature does not verify');
}
