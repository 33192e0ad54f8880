import { Writable } from 'node:stream';
import { pino, type DestinationStream, type Logger } from 'pino';
import pretty from 'pino-pretty';
import type { ResolvedConfig } from '../config/index.js';
import { errorSerializer, REDACTED, redactionPaths } from './redaction.js';

export type { Logger } from 'pino';

/** Options of {@link createLogger}. */
export interface LoggerOptions {
  /** Least severe level written: one of pino's levels (`fatal` … `trace`, or `silent`). */
  level: string;
  /** `json`: one JSON object a line, for machines. `pretty`: human-readable, via pino-pretty. */
  format: 'json' | 'pretty';
  /**
   * Whether conversation contents (`content`, `messages`, `input`, `args` …) are replaced by
   * `[redacted]`. Credentials are redacted regardless.
   */
  redactContent: boolean;
  /** Written as `name` on every line; omitted when unset. */
  name?: string;
  /** Where lines go. Default: standard output. */
  destination?: DestinationStream;
}

/**
 * Creates the process's root logger; modules and jobs derive theirs with
 * `logger.child({ sessionId, jobId })`. Errors belong under `err` and are serialised with pino's
 * standard serializer (`type`, `message`, `stack` and the error's own fields such as `code`); while
 * contents are redacted, a failed statement's parameters and failing row are held back from it
 * ({@link errorSerializer}).
 */
export function createLogger(options: LoggerOptions): Logger {
  const loggerOptions: pino.LoggerOptions = {
    level: options.level,
    redact: { paths: redactionPaths(options.redactContent), censor: REDACTED },
    serializers: { err: errorSerializer(options.redactContent) },
    ...(options.name === undefined ? {} : { name: options.name }),
  };
  return pino(loggerOptions, outputStream(options));
}

/**
 * pino-pretty runs in-process as a plain stream rather than as a worker-thread transport: there is no
 * thread to start, wait for or flush on shutdown.
 */
function outputStream(options: LoggerOptions): DestinationStream | undefined {
  if (options.format === 'json') return options.destination;
  if (options.destination === undefined) return pretty({ colorize: process.stdout.isTTY === true });
  // Colour codes would only garble a file or a test buffer.
  return pretty({ colorize: false, destination: asWritable(options.destination) });
}

/** pino-pretty pipes into its destination, so a bare `{ write }` object needs a stream around it. */
function asWritable(destination: DestinationStream): Writable {
  if (destination instanceof Writable) return destination;
  return new Writable({
    write(chunk: Buffer | string, _encoding, callback) {
      destination.write(chunk.toString());
      callback();
    },
  });
}

/**
 * The root logger as configured by `LOG_LEVEL`, `LOG_FORMAT` and `LOG_CONTENT`.
 *
 * @param destination - where lines go; default standard output.
 */
export function loggerFromConfig(config: ResolvedConfig, destination?: DestinationStream): Logger {
  return createLogger({
    level: config.log.level,
    format: config.log.format,
    redactContent: !config.log.content,
    ...(destination === undefined ? {} : { destination }),
  });
}
