import { describe, expect, it } from 'vitest';
import { storedIdsReadAs } from '../../../src/worker/unreadable-job-id.js';

describe('the stored id a job id read with U+FFFD came from', () => {
  // What BullMQ's Node client stores for 'half\ud83d' and 'half\ud83e': neither is UTF-8.
  const halfD83d = Buffer.from([0x68, 0x61, 0x6c, 0x66, 0xed, 0xa0, 0xbd]);
  const halfD83e = Buffer.from([0x68, 0x61, 0x6c, 0x66, 0xed, 0xa0, 0xbe]);
  const read = 'half\ufffd\ufffd\ufffd';

  it('picks the entries whose bytes decode to the id as read without being its UTF-8', () => {
    expect(halfD83d.toString('utf8')).toBe(read);
    expect(storedIdsReadAs([Buffer.from('other'), halfD83d, Buffer.from('7')], read)).toEqual([halfD83d]);
  });

  it('skips the id as read itself (a producer may use U+FFFD), and lists each stored id once', () => {
    expect(storedIdsReadAs([Buffer.from(read, 'utf8')], read)).toEqual([]);
    expect(storedIdsReadAs([halfD83d, halfD83e, halfD83d, Buffer.from(read, 'utf8')], read)).toEqual([halfD83d, halfD83e]);
    expect(storedIdsReadAs([], read)).toEqual([]);
  });
});
