import { InfrastructureError } from '../core/errors/index.js';

/**
 * `result()` gave up waiting after its `timeoutMs`. The input is not affected: it is durable and
 * will still run; call `result()` again to keep waiting. Its code is `system.infrastructure`
 * (retryable), so code that switches on codes treats it like any other wait that may succeed later;
 * `instanceof ResultTimeoutError` tells it apart.
 */
export class ResultTimeoutError extends InfrastructureError {
  constructor(sessionId: string, seq: number, timeoutMs: number) {
    super(`input ${seq} of session ${sessionId} did not finish within ${timeoutMs} ms`, { details: { sessionId, seq, timeoutMs } });
  }
}
