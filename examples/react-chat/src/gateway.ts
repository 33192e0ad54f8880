import type { UIMessage } from 'ai';

/** Where the gateway is and how to reach it, read once from Vite's env (`.env.local` or the shell). */
export const gatewayUrl = (import.meta.env.VITE_GATEWAY_URL ?? 'http://127.0.0.1:8080').replace(/\/+$/, '');

/** The chat endpoint: the transport posts here and resumes from `<chatApi>/<id>/stream`. */
export const chatApi = `${gatewayUrl}/v1/chat`;

/** `Authorization: Bearer <token>` when a token is configured, else nothing (GATEWAY_AUTH=none). */
export function authHeaders(): Record<string, string> {
  const token = import.meta.env.VITE_GATEWAY_TOKEN;
  return token ? { Authorization: `Bearer ${token}` } : {};
}

/** The error body the gateway answers with: `{ error: { code, message } }`. */
interface GatewayError {
  error?: { code?: string; message?: string };
}

/**
 * The chat's earlier messages (`GET /v1/chat/:id/messages`). A session that does not exist yet has
 * none: the first message creates it. The answer still running is not among them; `resume` brings it.
 */
export async function loadMessages(chatId: string, signal: AbortSignal): Promise<UIMessage[]> {
  const response = await fetch(`${chatApi}/${encodeURIComponent(chatId)}/messages`, { headers: authHeaders(), signal });
  if (response.status === 404) return [];
  if (!response.ok) {
    const body = (await response.json().catch(() => ({}))) as GatewayError;
    throw new Error(`${response.status} ${body.error?.code ?? ''} ${body.error?.message ?? response.statusText}`.trim());
  }
  return (await response.json()) as UIMessage[];
}

/** The chat (session) id: `?session=<id>` in the address, or a new one put there so a reload keeps it. */
export function chatIdFromLocation(): string {
  const url = new URL(window.location.href);
  const existing = url.searchParams.get('session');
  if (existing) return existing;
  const created = `chat-${crypto.randomUUID()}`;
  url.searchParams.set('session', created);
  window.history.replaceState(null, '', url);
  return created;
}
