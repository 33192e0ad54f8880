import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';

/**
 * How a failed request relates to the connection it was sent on:
 * - `not_delivered`: the server never ran it (an HTTP session the server no longer knows, a refused
 *   connection); safe to send again on a new connection, whatever the tool's policy.
 * - `in_doubt`: the connection was lost while the request was out; it may have taken effect.
 * - `null`: not a connection failure (a timeout, a cancel, an error the server answered).
 */
export type ConnectionLoss = 'not_delivered' | 'in_doubt' | null;

/** Classifies `error`, a failed request; `stillCurrent` is false when its connection has since been lost. */
export function connectionLoss(error: unknown, stillCurrent: boolean): ConnectionLoss {
  if (error instanceof StreamableHTTPError && error.code === 404) return 'not_delivered';
  if (error instanceof TypeError && causeCode(error) === 'ECONNREFUSED') return 'not_delivered';
  if (error instanceof McpError && error.code === Number(ErrorCode.ConnectionClosed)) return 'in_doubt';
  if (error instanceof TypeError && error.message === 'fetch failed') return 'in_doubt';
  return stillCurrent ? null : 'in_doubt';
}

function causeCode(error: Error): unknown {
  const cause: unknown = error.cause;
  return typeof cause === 'object' && cause !== null && 'code' in cause ? cause.code : undefined;
}
