import type { Stats } from './types';

export function formatTime(iso: string | null | undefined): string {
  if (iso === null || iso === undefined) return '—';
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  return date.toLocaleString(undefined, { dateStyle: 'short', timeStyle: 'medium' });
}

export function formatAgo(iso: string | null | undefined): string {
  if (iso === null || iso === undefined) return '—';
  const seconds = Math.round((Date.now() - new Date(iso).getTime()) / 1000);
  if (!Number.isFinite(seconds)) return iso;
  if (seconds < 60) return `${Math.max(seconds, 0)}s ago`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)}m ago`;
  if (seconds < 86400) return `${Math.floor(seconds / 3600)}h ago`;
  return `${Math.floor(seconds / 86400)}d ago`;
}

export function formatTokens(value: number | undefined): string {
  if (value === undefined) return '—';
  return value >= 10000 ? `${(value / 1000).toFixed(1)}k` : String(value);
}

/** The cost, when the API reports one (in US dollars). */
export function costOf(stats: Stats | undefined): string | null {
  const cost = stats?.costUsd ?? stats?.cost;
  return typeof cost === 'number' ? `$${cost.toFixed(4)}` : null;
}

export function formatDuration(ms: number | null): string {
  if (ms === null) return '';
  return ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(1)} s`;
}

/** Pretty JSON for arguments and results; text that is not JSON is shown as it is. */
export function prettyJson(value: unknown): string {
  if (typeof value === 'string') {
    try {
      return JSON.stringify(JSON.parse(value), null, 2);
    } catch {
      return value;
    }
  }
  return JSON.stringify(value, null, 2) ?? String(value);
}
