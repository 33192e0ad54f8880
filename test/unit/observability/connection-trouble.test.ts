import { EventEmitter } from 'node:events';
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { serverAddress } from '../../../src/config/index.js';
import { ConnectionTrouble, watchConnection } from '../../../src/observability/connection-trouble.js';
import { createLogger } from '../../../src/observability/logger.js';

function collectingLogger() {
  const lines: Record<string, unknown>[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
      callback();
    },
  });
  return { lines, logger: createLogger({ level: 'info', format: 'json', redactContent: true, destination }) };
}

describe('ConnectionTrouble', () => {
  it('logs at most one record per interval, counting the failures it stood for', () => {
    const { lines, logger } = collectingLogger();
    let now = 0;
    const trouble = new ConnectionTrouble(logger, { component: 'redis', address: '127.0.0.1:6379', now: () => now });
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:6379\n    at TCPConnectWrap.afterConnect'), { code: 'ECONNREFUSED' });
    for (let i = 0; i < 10; i += 1) {
      trouble.failed(refused);
      now += 1000;
    }
    expect(lines.map((line) => line.suppressed)).toEqual([0, 4]);
    expect(lines[0]).toMatchObject({ component: 'redis', address: '127.0.0.1:6379', error: { code: 'ECONNREFUSED', message: 'connect ECONNREFUSED 127.0.0.1:6379' } });
    expect(JSON.stringify(lines)).not.toContain('    at ');
    trouble.recovered();
    expect(lines[2]).toMatchObject({ msg: 'connection back: redis at 127.0.0.1:6379', suppressed: 4 });
    trouble.recovered();
    expect(lines).toHaveLength(3);
  });

  it('names host:port, never the user or password of the URL', () => {
    expect(serverAddress('redis://default:s3cret@redis.internal:6380/2', 6379)).toBe('redis.internal:6380');
    expect(serverAddress('postgres://u:p@db/x', 5432)).toBe('db:5432');
    expect(serverAddress('not a url', 6379)).toBe('(unparsable URL):6379');
  });
});

describe('the logged error of a lost connection', () => {
  it('has no stack, nor have its causes; other errors keep theirs', () => {
    const { lines, logger } = collectingLogger();
    const reset = Object.assign(new Error('write ECONNRESET'), { code: 'ECONNRESET' });
    logger.warn({ err: new Error('lease release failed', { cause: reset }) }, 'wrapped');
    logger.warn({ err: new Error('Connection terminated unexpectedly') }, 'pg');
    logger.warn({ err: new TypeError('a bug') }, 'bug');
    logger.warn({ err: new Error('writing 3 event(s) failed', { cause: new Error('the connection closed with this publish in flight') }) }, 'publish');
    const [wrapped, pg, bug, publish] = lines.map((line) => JSON.stringify(line));
    expect(publish).not.toContain('    at ');
    expect(wrapped).not.toContain('    at ');
    expect(wrapped).toContain('ECONNRESET');
    expect(pg).not.toContain('    at ');
    expect(bug).toContain('    at ');
  });
});

describe('watchConnection', () => {
  it("a BullMQ object's errors that are not the connection's keep their stack, at error level", () => {
    const { lines, logger } = collectingLogger();
    const target = new EventEmitter();
    watchConnection(target, logger, { component: 'bullmq.worker', address: '127.0.0.1:6379', alsoOtherErrors: true });
    target.emit('error', Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:6379'), { code: 'ECONNREFUSED' }));
    target.emit('error', new Error('WRONGPASS invalid username-password pair'));
    target.emit('error', new TypeError('a bug in a script'));
    expect(lines.map((line) => [line.level, line.msg])).toEqual([
      [40, 'connection trouble: bullmq.worker at 127.0.0.1:6379'],
      [50, 'bullmq.worker error'],
    ]);
    expect(JSON.stringify(lines[1])).toContain('    at ');
    target.emit('ready');
    expect(lines[2]).toMatchObject({ msg: 'connection back: bullmq.worker at 127.0.0.1:6379', suppressed: 1 });
  });

  it("a job whose keys Redis lost (a restart without persistence, a failover) is a warning without a stack", () => {
    const { lines, logger } = collectingLogger();
    const target = new EventEmitter();
    watchConnection(target, logger, { component: 'bullmq.worker', address: '127.0.0.1:6379', alsoOtherErrors: true });
    target.emit('error', Object.assign(new Error('Missing key for job 3. moveToFinished'), { code: -1 }));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ level: 40, component: 'bullmq.worker', error: 'Missing key for job 3. moveToFinished' });
    expect(JSON.stringify(lines[0])).not.toContain('    at ');
  });
});
