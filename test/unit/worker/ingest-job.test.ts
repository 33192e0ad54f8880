import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { jobInputId, originJobId } from '../../../src/worker/ingest-job.js';

const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

describe('the ids a raw job is ingested under', () => {
  it('uses a job id that fits as it is, and hashes one that does not', () => {
    expect(jobInputId('order-42')).toBe('bullmq:order-42');
    expect(jobInputId('a ')).toBe(`bullmq-sha256:${sha256('a ')}`);
    expect(jobInputId('x'.repeat(191))).toBe(`bullmq-sha256:${sha256('x'.repeat(191))}`);
    expect(() => jobInputId(undefined)).toThrow(expect.objectContaining({ code: 'input.invalid' }));
    // An id BullMQ numbered itself is qualified by the job's creation time: the counter restarts
    // after a Redis flush, and the numbers come round again.
    expect(jobInputId('7', 1_764_000_000_123)).toBe('bullmq:7@1764000000123');
    expect(jobInputId('7', 1_764_000_000_999)).not.toBe(jobInputId('7', 1_764_000_000_123));
    expect(jobInputId('order-42', 1_764_000_000_123)).toBe('bullmq:order-42');
    expect(jobInputId('7')).toBe('bullmq:7');
  });

  it('records the job id as the origin unless the column cannot hold it', () => {
    expect(originJobId('order-42')).toBe('order-42');
    for (const unfit of ['y'.repeat(513), 'job\u0000x', 'half \ud83d', '']) expect(originJobId(unfit)).toBe(`sha256:${sha256(unfit)}`);
  });
});
