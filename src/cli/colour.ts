import type { CliIo } from './cli-io.js';

/** A way to mark words: ANSI colours on a terminal, the words unchanged otherwise. */
export interface Paint {
  bold: (text: string) => string;
  dim: (text: string) => string;
  red: (text: string) => string;
  green: (text: string) => string;
  yellow: (text: string) => string;
}

const plain = (text: string): string => text;
const ansi = (open: number, close: number) => (text: string) => `\u001b[${open}m${text}\u001b[${close}m`;

/** Colour only when stdout is a terminal, and never when `NO_COLOR` is set to anything but empty (no-color.org). */
export function paint(io: CliIo): Paint {
  const noColor = io.env.NO_COLOR;
  if (io.isTty !== true || (noColor !== undefined && noColor !== '')) return { bold: plain, dim: plain, red: plain, green: plain, yellow: plain };
  return { bold: ansi(1, 22), dim: ansi(2, 22), red: ansi(31, 39), green: ansi(32, 39), yellow: ansi(33, 39) };
}

/** A status word in its colour: done and completed green, failed red, waiting and running yellow. */
export function paintStatus(p: Paint, status: string): string {
  if (status === 'done' || status === 'completed' || status === 'idle') return p.green(status);
  if (status === 'failed' || status === 'cancelled' || status === 'budget_exceeded' || status === 'degraded') return p.red(status);
  return p.yellow(status);
}
