import type { Socket } from 'node:net';
import type { Redis } from 'ioredis';

/** What a connection's socket handed to the kernel since {@link countSocketWrites}: writes, and the chunks they carried. */
export interface SocketWrites {
  writes: number;
  chunks: number;
}

type StreamInternals = Socket & {
  _write(chunk: unknown, encoding: BufferEncoding, callback: (error?: Error | null) => void): void;
  _writev(chunks: { chunk: unknown }[], callback: (error?: Error | null) => void): void;
};

/**
 * Counts the writes of `redis`'s current socket at the stream's lowest level (`_write`, `_writev`:
 * one system call each), so a test can tell whether commands left one by one or together.
 */
export function countSocketWrites(redis: Redis): SocketWrites {
  const socket = (redis as unknown as { stream: StreamInternals }).stream;
  const counts: SocketWrites = { writes: 0, chunks: 0 };
  const write = socket._write;
  const writev = socket._writev;
  socket._write = function countedWrite(this: StreamInternals, chunk, encoding, callback) {
    counts.writes += 1;
    counts.chunks += 1;
    write.call(this, chunk, encoding, callback);
  };
  socket._writev = function countedWritev(this: StreamInternals, chunks, callback) {
    counts.writes += 1;
    counts.chunks += chunks.length;
    writev.call(this, chunks, callback);
  };
  return counts;
}
