import { describe, expect, it } from 'vitest';
import * as loopfleet from '../../../src/index.js';

describe("the package's public exports", () => {
  it('exports the client, the errors, the tool helper and the wire names', () => {
    expect(typeof loopfleet.SessionQueue).toBe('function');
    expect(typeof loopfleet.SessionQueue.fromEnv).toBe('function');
    expect(typeof loopfleet.ResultTimeoutError).toBe('function');
    expect(loopfleet.ERROR_CODES).toContain('input.invalid');
    expect(new loopfleet.SessionInvalidIdError('x').code).toBe('session.invalid_id');
    expect(typeof loopfleet.isLoopfleetError).toBe('function');
    expect(typeof loopfleet.defineTool).toBe('function');
    expect(typeof loopfleet.defineAgent).toBe('function');
    expect(loopfleet.eventStreamKey('loopfleet', 's1')).toBe('loopfleet:events:s1');
    expect(loopfleet.eventStreamKey({ queueName: 'q', cluster: true, shards: 3 }, '123456789')).toBe('{q:1}:events:123456789');
    expect(loopfleet.shardPrefix({ queueName: 'q', cluster: true, shards: 3 }, loopfleet.shardOf({ queueName: 'q', cluster: true, shards: 3 }, '123456789'))).toBe('bull:{q:1}');
    expect(loopfleet.JOB).toMatchObject({ send: 'send', resume: 'resume', drain: 'drain' });
    expect(loopfleet.SESSION_QUEUE_DEFAULTS.queueName).toBe('loopfleet');
    expect(loopfleet.MAX_HISTORY_PAGE).toBe(10_000);
  });

  it('SessionQueue.fromEnv refuses invalid configuration before opening anything', () => {
    expect(() => loopfleet.SessionQueue.fromEnv({ LOOPFLEET_QUEUE: 'a:b' })).toThrow(expect.objectContaining({ code: 'config.invalid' }));
  });
});
