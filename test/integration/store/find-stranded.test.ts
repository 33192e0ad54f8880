import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findStrandedSessions } from '../../../src/store/upkeep/find-stranded-sessions.js';
import { openStoreFixture, sessionId, type StoreFixture } from './store-fixture.js';

describe('the sweeper query', () => {
  let fx: StoreFixture;

  beforeAll(async () => {
    fx = await openStoreFixture('find_stranded');
  });

  afterAll(async () => {
    await fx.close();
  });

  it('with more stranded sessions than its limit, samples them: none is left out sweep after sweep', async () => {
    const ids = ['a', 'b', 'c'].map((label) => sessionId(`stranded-${label}`));
    for (const id of ids) await fx.store.createSession({ id });
    // Their holders died an hour ago, leases unreleased.
    await fx.pool.query(`UPDATE sessions SET lease_owner = 'dead', lease_token = nextval('lease_token_seq'), lease_expires_at = now() - interval '1 hour' WHERE id = ANY($1)`, [ids]);
    const seen = new Set<string>();
    // Sampling at random, one of three is missed 200 times in a row with a probability of 3 × (2/3)^200.
    for (let sweep = 0; sweep < 200 && seen.size < ids.length; sweep += 1) {
      const found = await findStrandedSessions(fx.pool, { graceMs: 1_000, limit: 1 });
      expect(found).toHaveLength(1);
      seen.add(found[0]!);
    }
    expect([...seen].sort()).toEqual([...ids].sort());
  });
});
