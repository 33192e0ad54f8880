import type pg from 'pg';

/** Anything a single statement can run on: the pool (autocommit) or a client inside a transaction. */
export type Queryable = pg.Pool | pg.PoolClient;
