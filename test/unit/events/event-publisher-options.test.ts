import { describe, expect, it } from 'vitest';
import { EVENT_PUBLISHER_DEFAULTS, resolveEventPublisherOptions } from '../../../src/events/event-publisher-options.js';

describe('resolveEventPublisherOptions', () => {
  it('fills the documented defaults', () => {
    const config = resolveEventPublisherOptions({ queueName: 'q' });
    expect(config).toMatchObject({ queueName: 'q', ownsConnection: false, ...EVENT_PUBLISHER_DEFAULTS });
    expect(EVENT_PUBLISHER_DEFAULTS).toMatchObject({ maxLen: 10_000, idleExpirySeconds: 604_800, coalesceMs: 25, coalesceMaxChars: 2048 });
  });

  it.each([
    [{ queueName: '' }, 'queueName'],
    [{ queueName: 'q', maxLen: 0 }, 'maxLen'],
    [{ queueName: 'q', idleExpirySeconds: 1.5 }, 'idleExpirySeconds'],
    [{ queueName: 'q', coalesceMs: -1 }, 'coalesceMs'],
    [{ queueName: 'q', coalesceMaxChars: Number.NaN }, 'coalesceMaxChars'],
    [{ queueName: 'q', maxBatchEvents: 0 }, 'maxBatchEvents'],
  ])('refuses %o with config.invalid naming %s', (options, field) => {
    expect(() => resolveEventPublisherOptions(options)).toThrow(expect.objectContaining({ code: 'config.invalid', message: expect.stringContaining(field) }));
  });

  it('allows coalesceMs 0 (no merging)', () => {
    expect(resolveEventPublisherOptions({ queueName: 'q', coalesceMs: 0 }).coalesceMs).toBe(0);
  });
});
