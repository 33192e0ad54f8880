/** The gateway's REST API as the viewer uses it: fetch with the Bearer token, typed JSON errors. */

const TOKEN_KEY = 'loopfleet.token';

/** The token typed into the token box; kept for this tab only. */
export function getToken(): string {
  return sessionStorage.getItem(TOKEN_KEY) ?? '';
}

export function setToken(token: string): void {
  if (token === '') sessionStorage.removeItem(TOKEN_KEY);
  else sessionStorage.setItem(TOKEN_KEY, token);
}

/** An error answer of the gateway: `{ error: { code, message } }`, or a network failure (`network`). */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

export function authHeaders(): Record<string, string> {
  const token = getToken();
  return token === '' ? {} : { authorization: `Bearer ${token}` };
}

/** Calls the API and answers its JSON body (undefined for 204); throws {@link ApiError} otherwise. */
export async function api<T>(method: string, path: string, body?: unknown, signal?: AbortSignal): Promise<T> {
  const headers: Record<string, string> = Object.assign({ accept: 'application/json' }, authHeaders());
  if (body !== undefined) headers['content-type'] = 'application/json';
  let response: Response;
  try {
    response = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), signal });
  } catch (error) {
    if (signal?.aborted) throw error;
    throw new ApiError(0, 'network', error instanceof Error ? error.message : String(error));
  }
  if (response.status === 204) return undefined as T;
  const text = await response.text();
  const json = parseJson(text);
  if (!response.ok) {
    const err = isRecord(json) && isRecord(json.error) ? json.error : {};
    const code = typeof err.code === 'string' ? err.code : `http.${response.status}`;
    const message = typeof err.message === 'string' ? err.message : text.slice(0, 200) || response.statusText;
    throw new ApiError(response.status, code, message);
  }
  return json as T;
}

function parseJson(text: string): unknown {
  if (text === '') return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Builds `path?name=value…`, leaving out empty values. */
export function withQuery(path: string, query: Record<string, string | number | undefined>): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) {
    if (value !== undefined && value !== '') params.set(name, String(value));
  }
  const text = params.toString();
  return text === '' ? path : `${path}?${text}`;
}

export function sessionPath(id: string, tail = ''): string {
  return `/v1/sessions/${encodeURIComponent(id)}${tail}`;
}
