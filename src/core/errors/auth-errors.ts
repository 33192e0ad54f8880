import { LoopfleetError } from './loopfleet-error.js';

/** A gateway caller who is not who the request claims, or may not do what it asks (docs/gateway.md, "Auth"). */
abstract class AuthFault extends LoopfleetError {
  readonly retryable = false;
  readonly fault = 'input' as const;
}

/** No `Authorization: Bearer` token on a request that needs one. */
export class AuthMissingTokenError extends AuthFault {
  readonly code = 'auth.missing_token';
}

/** A token that is malformed, wrongly signed, or whose claims are not the gateway's. */
export class AuthInvalidTokenError extends AuthFault {
  readonly code = 'auth.invalid_token';
}

/** A token past its `exp`. */
export class AuthExpiredError extends AuthFault {
  readonly code = 'auth.expired';
}

/** A valid token whose scope or `sessions` claim does not cover the request. */
export class AuthForbiddenError extends AuthFault {
  readonly code = 'auth.forbidden';
}
