import { describe, expect, it } from 'vitest';
import { ConfigInvalidError } from '../../../src/core/errors/index.js';
import { configSummary, loadClientConfig, loadConfig, redactUrl, type ResolvedConfig } from '../../../src/config/index.js';
import { CLIENT_VARIABLES } from '../../../src/config/load-config.js';
import { configError } from './config-error.js';

const OPENAI_KEY = 'sk-test-openai-0123456789abcdef';
const ANTHROPIC_KEY = 'sk-ant-test-0123456789abcdef';


describe('loadConfig defaults', () => {
  it('resolves every field from an empty environment', () => {
    const expected: ResolvedConfig = {
      databaseUrl: 'postgres://postgres:postgres@127.0.0.1:5432/loopfleet',
      redisUrl: 'redis://127.0.0.1:6379',
      redisClusterNodes: null,
      queueName: 'loopfleet',
      queueShards: 1,
      fairDispatch: true,
      llm: {
        provider: 'scripted',
        model: 'scripted',
        openai: { apiKey: null, baseUrl: null },
        anthropic: { apiKey: null, baseUrl: null },
        httpClient: 'node',
        openaiPromptCacheKey: true,
        requestTimeoutMs: 120_000,
        fallback: [],
      },
      worker: {
        concurrency: 16,
        heapGrowthPercent: 100,
        poolSize: 10,
        pooler: 'none',
        statementTimeoutMs: 30_000,
        batch: { maxSize: 64, maxInFlight: 2, overlapMinWaiting: 16 },
        windowCache: { maxBytes: 64 * 1024 * 1024, minMessages: 1 },
        leaseTtlMs: 30_000,
        blockedExitMs: 30_000,
        jobLockMs: 10_000,
        drain: { sliceInputs: 10, sliceMs: 30_000, sweepEveryMs: 5_000, sweepGraceMs: 2_000, maxInputAttempts: 10 },
        toolsModule: null,
        agentsModule: null,
        hooksModule: null,
        agentTimers: false,
        pricesFile: null,
        maxInputBytes: 1_048_576,
      },
      events: { maxLen: 10_000, idleExpirySeconds: 604_800, coalesceMs: 25 },
      metrics: { port: 9464, tenantLabel: false },
      log: { level: 'info', format: 'json', content: false },
    };
    expect(loadConfig({})).toEqual(expected);
  });

  it('treats empty and blank variables as unset', () => {
    const config = loadConfig({
      DATABASE_URL: '',
      WORKER_CONCURRENCY: '',
      LLM_PROVIDER: '',
      OPENAI_API_KEY: '',
      LOG_LEVEL: '  ',
      LOOPFLEET_TOOLS: '',
      METRICS_PORT: '',
    });
    expect(config).toEqual(loadConfig({}));
  });

  it('ignores unrelated variables', () => {
    expect(loadConfig({ PATH: '/usr/bin', HOME: '/root' })).toEqual(loadConfig({}));
  });
});

describe('loadConfig with values set', () => {
  it('reads every variable', () => {
    const config = loadConfig({
      DATABASE_URL: 'postgresql://app:pw@db:5432/app',
      REDIS_URL: 'rediss://cache:6380/1',
      LOOPFLEET_QUEUE: 'fleet_A-1',
      LLM_PROVIDER: 'anthropic',
      LLM_MODEL: 'claude-opus-4-1',
      ANTHROPIC_API_KEY: ANTHROPIC_KEY,
      ANTHROPIC_BASE_URL: 'https://proxy.example/anthropic',
      OPENAI_BASE_URL: 'http://localhost:8080/v1',
      LLM_REQUEST_TIMEOUT_MS: '5000',
      WORKER_CONCURRENCY: '4',
      WORKER_HEAP_GROWTH_PERCENT: '0',
      DATABASE_POOL_SIZE: '7',
      DATABASE_POOLER: 'session',
      DATABASE_BATCH_SIZE: '1',
      DATABASE_BATCH_STATEMENTS: '3',
      DATABASE_BATCH_OVERLAP_MIN: '5',
      DATABASE_STATEMENT_TIMEOUT_MS: '1500',
      METRICS_PORT: '0',
      METRICS_TENANT_LABEL: 'true',
      LOG_LEVEL: 'debug',
      LOG_FORMAT: 'pretty',
      LOG_CONTENT: '1',
      LOOPFLEET_TOOLS: './tools.js',
      LOOPFLEET_AGENTS: './agents.json',
      LOOPFLEET_HOOKS: './hooks.js',
      LOOPFLEET_MAX_INPUT_BYTES: '2048',
      LEASE_TTL_MS: '1000',
      WORKER_JOB_LOCK_MS: '6000',
      DRAIN_SLICE_INPUTS: '3',
      DRAIN_SLICE_MS: '4000',
      SWEEP_EVERY_MS: '750',
      SWEEP_GRACE_MS: '0',
      MAX_INPUT_ATTEMPTS: '2',
      WORKER_BLOCKED_EXIT_MS: '0',
      LLM_HTTP_CLIENT: 'fetch',
      OPENAI_PROMPT_CACHE_KEY: 'false',
      WINDOW_CACHE_MB: '0',
      WINDOW_CACHE_MIN_MESSAGES: '5',
      LOOPFLEET_AGENT_TIMERS: 'true',
      LOOPFLEET_PRICES: './prices.json',
    });
    expect(config.databaseUrl).toBe('postgresql://app:pw@db:5432/app');
    expect(config.redisUrl).toBe('rediss://cache:6380/1');
    expect(config.queueName).toBe('fleet_A-1');
    expect(config.llm).toEqual({
      provider: 'anthropic',
      model: 'claude-opus-4-1',
      openai: { apiKey: null, baseUrl: 'http://localhost:8080/v1' },
      anthropic: { apiKey: ANTHROPIC_KEY, baseUrl: 'https://proxy.example/anthropic' },
      httpClient: 'fetch',
      openaiPromptCacheKey: false,
      requestTimeoutMs: 5000,
      fallback: [],
    });
    expect(config.worker).toEqual({
      concurrency: 4,
      heapGrowthPercent: 0,
      poolSize: 7,
      pooler: 'session',
      statementTimeoutMs: 1500,
      batch: { maxSize: 1, maxInFlight: 3, overlapMinWaiting: 5 },
      windowCache: { maxBytes: 0, minMessages: 5 },
      leaseTtlMs: 1000,
      blockedExitMs: 0,
      jobLockMs: 6000,
      drain: { sliceInputs: 3, sliceMs: 4000, sweepEveryMs: 750, sweepGraceMs: 0, maxInputAttempts: 2 },
      toolsModule: './tools.js',
      agentsModule: './agents.json',
      hooksModule: './hooks.js',
      agentTimers: true,
      pricesFile: './prices.json',
      maxInputBytes: 2048,
    });
    expect(config.metrics).toEqual({ port: 0, tenantLabel: true });
    expect(config.log).toEqual({ level: 'debug', format: 'pretty', content: true });
  });

  it.each([
    ['true', true],
    ['TRUE', true],
    ['1', true],
    ['false', false],
    ['0', false],
  ])('reads LOG_CONTENT=%s as %s', (raw, expected) => {
    expect(loadConfig({ LOG_CONTENT: raw }).log.content).toBe(expected);
  });
});

describe('LLM provider selection', () => {
  it('falls back to scripted without any key', () => {
    expect(loadConfig({}).llm).toMatchObject({ provider: 'scripted', model: 'scripted' });
  });

  it('infers openai from OPENAI_API_KEY, even when an Anthropic key is also set', () => {
    const llm = loadConfig({ OPENAI_API_KEY: OPENAI_KEY, ANTHROPIC_API_KEY: ANTHROPIC_KEY }).llm;
    expect(llm).toMatchObject({ provider: 'openai', model: 'gpt-4o-mini', openai: { apiKey: OPENAI_KEY } });
  });

  it('infers anthropic from ANTHROPIC_API_KEY alone', () => {
    const llm = loadConfig({ ANTHROPIC_API_KEY: ANTHROPIC_KEY }).llm;
    expect(llm).toMatchObject({ provider: 'anthropic', model: 'claude-sonnet-4-5' });
  });

  it('honours an explicit scripted provider even when keys are set', () => {
    expect(loadConfig({ LLM_PROVIDER: 'scripted', OPENAI_API_KEY: OPENAI_KEY }).llm.provider).toBe('scripted');
  });

  it.each([
    ['openai', 'OPENAI_API_KEY', { ANTHROPIC_API_KEY: ANTHROPIC_KEY }],
    ['anthropic', 'ANTHROPIC_API_KEY', { OPENAI_API_KEY: OPENAI_KEY }],
  ])('rejects LLM_PROVIDER=%s without %s', (provider, keyVariable, otherKey) => {
    const error = configError({ LLM_PROVIDER: provider, ...otherKey });
    expect(error.code).toBe('config.invalid');
    expect(error.retryable).toBe(false);
    expect(error.message).toContain(`${keyVariable}: required when LLM_PROVIDER=${provider}`);
    expect(error.details).toEqual({ variables: [keyVariable] });
    expect(error.message).not.toContain(OPENAI_KEY);
    expect(error.message).not.toContain(ANTHROPIC_KEY);
  });
});

describe('invalid variables', () => {
  it.each([
    ['DATABASE_URL', 'mysql://u@db/app', 'must be a postgres:// or postgresql:// URL'],
    ['DATABASE_URL', 'not a url', 'must be a valid postgres:// or postgresql:// URL'],
    ['REDIS_URL', 'http://cache:6379', 'must be a redis:// or rediss:// URL'],
    ['REDIS_URL', 'redis://cache:6379/abc', 'must have nothing or a database number (/0, /1, …) as its path'],
    ['OPENAI_BASE_URL', 'ftp://proxy', 'must be a http:// or https:// URL'],
    ['LLM_PROVIDER', 'mistral', 'must be one of openai, anthropic, scripted (got "mistral")'],
    ['WORKER_CONCURRENCY', '-1', 'must be a positive integer (got "-1")'],
    ['WORKER_CONCURRENCY', '0', 'must be a positive integer (got "0")'],
    ['WORKER_CONCURRENCY', 'abc', 'must be a positive integer (got "abc")'],
    ['WORKER_CONCURRENCY', '1.5', 'must be a positive integer (got "1.5")'],
    ['WORKER_CONCURRENCY', '1e2', 'must be a positive integer (got "1e2")'],
    ['WORKER_CONCURRENCY', '10001', 'must be at most 10000 (got "10001")'],
    ['WORKER_HEAP_GROWTH_PERCENT', '-1', 'must be an integer from 0 to 1000 (percent; 0 leaves V8 its own) (got "-1")'],
    ['WORKER_HEAP_GROWTH_PERCENT', '1001', 'must be at most 1000 (got "1001")'],
    ['WORKER_HEAP_GROWTH_PERCENT', '50%', 'must be an integer from 0 to 1000 (percent; 0 leaves V8 its own) (got "50%")'],
    ['DATABASE_POOL_SIZE', '0', 'must be a positive integer (got "0")'],
    ['DATABASE_POOL_SIZE', '1001', 'must be at most 1000 (got "1001")'],
    ['DATABASE_POOLER', 'pgbouncer', 'must be one of none, session, transaction (got "pgbouncer")'],
    ['DATABASE_BATCH_SIZE', '0', 'must be an integer from 1 to 1000 (writes per statement) (got "0")'],
    ['DATABASE_BATCH_STATEMENTS', '1.5', 'must be an integer from 1 to 1000 (batched statements at once) (got "1.5")'],
    ['DATABASE_BATCH_OVERLAP_MIN', '0', 'must be an integer from 1 to 100000 (writes or reads waiting) (got "0")'],
    ['DATABASE_STATEMENT_TIMEOUT_MS', '999', 'must be 0 (none) or an integer from 1000 to 3600000 (milliseconds) (got "999")'],
    ['DATABASE_STATEMENT_TIMEOUT_MS', '3600001', 'must be at most 3600000 (got "3600001")'],
    ['DATABASE_STATEMENT_TIMEOUT_MS', '30s', 'must be 0 (none) or an integer from 1000 to 3600000 (milliseconds) (got "30s")'],
    ['METRICS_PORT', '65536', 'must be at most 65535 (got "65536")'],
    ['METRICS_PORT', '-5', 'must be an integer from 0 to 65535 (got "-5")'],
    ['METRICS_PORT', 'http', 'must be an integer from 0 to 65535 (got "http")'],
    ['LOOPFLEET_QUEUE', 'loop:fleet', 'must be 1 to 64 characters of A-Z, a-z, 0-9, "_" or "-" (no ":")'],
    ['LOOPFLEET_QUEUE', 'x'.repeat(65), 'must be 1 to 64 characters'],
    ['LOG_LEVEL', 'verbose', 'must be one of fatal, error, warn, info, debug, trace, silent (got "verbose")'],
    ['LOG_FORMAT', 'xml', 'must be one of json, pretty'],
    ['LOG_CONTENT', 'yes', 'must be true, false, 1 or 0'],
    ['LEASE_TTL_MS', '999', 'must be an integer of at least 1000'],
    ['WORKER_JOB_LOCK_MS', '4999', 'must be an integer from 5000 to 600000 (milliseconds) (got "4999")'],
    ['WORKER_JOB_LOCK_MS', '600001', 'must be at most 600000 (got "600001")'],
    ['DRAIN_SLICE_INPUTS', '0', 'must be a positive integer (inputs) (got "0")'],
    ['DRAIN_SLICE_MS', '1.5', 'must be a positive integer (milliseconds) (got "1.5")'],
    ['SWEEP_EVERY_MS', '99', 'must be an integer of at least 100 (milliseconds) (got "99")'],
    ['SWEEP_GRACE_MS', '-1', 'must be a non-negative integer (milliseconds) (got "-1")'],
    ['MAX_INPUT_ATTEMPTS', '1001', 'must be at most 1000 (got "1001")'],
    ['WORKER_BLOCKED_EXIT_MS', '999', 'must be 0 (off) or an integer of at least 1000 (milliseconds) (got "999")'],
    ['WORKER_BLOCKED_EXIT_MS', '-1', 'must be 0 (off) or an integer of at least 1000 (milliseconds) (got "-1")'],
    ['LLM_HTTP_CLIENT', 'undici', 'must be one of node, fetch (got "undici")'],
    ['WINDOW_CACHE_MB', '-1', 'must be a non-negative integer (MiB; 0 turns the window cache off) (got "-1")'],
    ['WINDOW_CACHE_MIN_MESSAGES', '0', 'must be a positive integer (messages) (got "0")'],
    ['LLM_REQUEST_TIMEOUT_MS', '3000000000', 'must be at most 2147483647'],
    ['LOOPFLEET_MAX_INPUT_BYTES', '0', 'must be a positive integer (bytes)'],
  ])('rejects %s=%j, naming the variable', (variable, value, expected) => {
    const error = configError({ [variable]: value });
    expect(error.code).toBe('config.invalid');
    expect(error.message).toContain(`  - ${variable}: ${expected}`);
    expect(error.details).toEqual({ variables: [variable] });
  });

  it('lists every problem in one error', () => {
    const error = configError({
      WORKER_CONCURRENCY: '-1',
      METRICS_PORT: '70000',
      LOG_LEVEL: 'loud',
      LOOPFLEET_QUEUE: 'a:b',
      LLM_PROVIDER: 'openai',
    });
    expect(error.message.split('\n')[0]).toBe('Invalid configuration:');
    expect(error.message).toContain('  - WORKER_CONCURRENCY: must be a positive integer (got "-1")');
    expect(error.message).toContain('  - OPENAI_API_KEY: required when LLM_PROVIDER=openai');
    expect(error.details['variables']).toEqual(
      expect.arrayContaining(['WORKER_CONCURRENCY', 'METRICS_PORT', 'LOG_LEVEL', 'LOOPFLEET_QUEUE', 'OPENAI_API_KEY']),
    );
    expect(error.details['variables']).toHaveLength(5);
    expect(error.message.split('\n')).toHaveLength(6);
  });
});

describe('secrets in error messages', () => {
  it.each([
    ['DATABASE_URL', 'lf:hunter2secret@db/app', 'must be a postgres:// or postgresql:// URL: its scheme is not one of these'],
    ['DATABASE_URL', 'mysql://app:hunter2secret@db/app', 'must be a postgres:// or postgresql:// URL: its scheme is not one of these'],
    ['DATABASE_URL', 'mysql://db/app?password=hunter2secret', 'must be a postgres:// or postgresql:// URL: its scheme is not one of these'],
    ['DATABASE_URL', 'postgres:app:hunter2secret@db/app', 'must be a postgres:// or postgresql:// URL: "//" must follow the scheme'],
    ['REDIS_URL', 'rediss:/default:hunter2secret@cache', 'must be a redis:// or rediss:// URL: "//" must follow the scheme'],
    ['REDIS_URL', 'http://:hunter2secret@cache', 'must be a redis:// or rediss:// URL: its scheme is not one of these'],
    ['REDIS_URL', 'redis://cache/hunter2secret@x', 'must have nothing or a database number (/0, /1, …) as its path'],
    ['OPENAI_BASE_URL', 'https:u:hunter2secret@proxy', 'must be a http:// or https:// URL: "//" must follow the scheme'],
    ['ANTHROPIC_BASE_URL', 'ftp://u:hunter2secret@proxy?sslpassword=hunter2secret', 'must be a http:// or https:// URL: its scheme is not one of these'],
  ])('never shows an invalid %s, not even masked: %s', (variable, value, expected) => {
    const error = configError({ [variable]: value });
    expect(error.message).toContain(`  - ${variable}: ${expected} (the value is not shown: it may contain a password)`);
    expect(error.message).not.toContain('hunter2');
    expect(error.message).not.toContain('***');
    expect(JSON.stringify(error.toJSON())).not.toContain('hunter2');
  });

  it('does not echo a URL that does not parse', () => {
    const error = configError({ DATABASE_URL: 'postgres://app:hunter2secret@db host/app' });
    expect(error.message).toContain('DATABASE_URL');
    expect(error.message).not.toContain('hunter2secret');
  });

  it('never includes an API key, whatever else is wrong', () => {
    const error = configError({
      OPENAI_API_KEY: OPENAI_KEY,
      ANTHROPIC_API_KEY: ANTHROPIC_KEY,
      OPENAI_BASE_URL: 'ftp://u:basepass77@proxy',
      WORKER_CONCURRENCY: 'many',
    });
    expect(error.message).not.toContain(OPENAI_KEY);
    expect(error.message).not.toContain(ANTHROPIC_KEY);
    expect(error.message).not.toContain('basepass77');
    expect(JSON.stringify(error.toJSON())).not.toContain(OPENAI_KEY);
  });
});

describe('redactUrl', () => {
  it('masks the password and keeps the rest', () => {
    expect(redactUrl('postgres://app:s3cret@db:5432/app')).toBe('postgres://app:***@db:5432/app');
    expect(redactUrl('redis://:s3cret@cache:6379/0')).toBe('redis://:***@cache:6379/0');
  });

  it('returns URLs without a password, and unparseable strings, unchanged', () => {
    expect(redactUrl('redis://127.0.0.1:6379')).toBe('redis://127.0.0.1:6379');
    expect(redactUrl('postgres://app@db/app')).toBe('postgres://app@db/app');
    expect(redactUrl('not a url')).toBe('not a url');
    expect(redactUrl('postgres://app@db/app?sslmode=require&application_name=a%20b')).toBe('postgres://app@db/app?sslmode=require&application_name=a%20b');
  });

  it('masks password query parameters, in any case or percent-encoding, and keeps the other parameters', () => {
    expect(redactUrl('postgres://app@db/app?sslmode=require&password=s3cret')).toBe('postgres://app@db/app?sslmode=require&password=***');
    expect(redactUrl('postgres://db/app?sslpassword=k3y&pass=p4ss&PassWord=up')).toBe('postgres://db/app?sslpassword=***&pass=***&PassWord=***');
    expect(redactUrl('redis://cache:6379/0?password=s3cret')).toBe('redis://cache:6379/0?password=***');
    expect(redactUrl('postgres://u:one@db/app?%70assword=two')).toBe('postgres://u:***@db/app?%70assword=***');
    expect(redactUrl('postgres://db/app?ssl%50assword=two&x=%zz')).toBe('postgres://db/app?ssl%50assword=***&x=%zz');
    for (const url of ['postgres://db/app?password', 'postgres://db/app?password=', 'postgres://db/app?pa%73s=s%33cret']) {
      expect(redactUrl(url)).not.toMatch(/s3cret|s%33cret/);
      expect(redactUrl(url)).toContain('=***');
    }
  });
});

describe('configSummary', () => {
  it('replaces keys by "set" or null and masks URL passwords', () => {
    const config = loadConfig({
      OPENAI_API_KEY: OPENAI_KEY,
      OPENAI_BASE_URL: 'https://u:basepass77@proxy.example/v1',
      REDIS_URL: 'redis://:redispass99@cache:6379',
    });
    const summary = configSummary(config);
    const text = JSON.stringify(summary);
    expect(text).not.toContain(OPENAI_KEY);
    expect(text).not.toContain('basepass77');
    expect(text).not.toContain('redispass99');
    expect(text).not.toContain(':postgres@');
    expect(summary).toMatchObject({
      databaseUrl: 'postgres://postgres:***@127.0.0.1:5432/loopfleet',
      redisUrl: 'redis://:***@cache:6379',
      queueName: 'loopfleet',
      llm: {
        provider: 'openai',
        openai: { apiKey: 'set', baseUrl: 'https://u:***@proxy.example/v1' },
        anthropic: { apiKey: null, baseUrl: null },
      },
      worker: config.worker,
      metrics: config.metrics,
      log: config.log,
    });
  });
});

describe('LLM_FALLBACK', () => {
  it('parses provider:model pairs in order', () => {
    const config = loadConfig({ OPENAI_API_KEY: 'sk-a', ANTHROPIC_API_KEY: 'sk-b', LLM_FALLBACK: 'anthropic:claude-x, openai:gpt-y' });
    expect(config.llm.fallback).toEqual([
      { provider: 'anthropic', model: 'claude-x' },
      { provider: 'openai', model: 'gpt-y' },
    ]);
  });

  it('rejects a malformed pair and a provider without its key, naming the variable', () => {
    expect(() => loadConfig({ LLM_FALLBACK: 'nonsense' })).toThrowError(/LLM_FALLBACK: "nonsense" is not provider:model/);
    expect(() => loadConfig({ LLM_FALLBACK: 'openai:gpt-4o-mini' })).toThrowError(/LLM_FALLBACK: "openai:gpt-4o-mini" needs OPENAI_API_KEY/);
  });
});

describe('event stream settings', () => {
  it('reads retention and coalescing, and names a bad value', () => {
    const config = loadConfig({ LOOPFLEET_EVENTS_MAXLEN: '500', LOOPFLEET_EVENTS_TTL_SECONDS: '3600', LOOPFLEET_EVENTS_COALESCE_MS: '0' });
    expect(config.events).toEqual({ maxLen: 500, idleExpirySeconds: 3600, coalesceMs: 0 });
    expect(() => loadConfig({ LOOPFLEET_EVENTS_MAXLEN: '5' })).toThrowError(/LOOPFLEET_EVENTS_MAXLEN/);
  });
});

describe('statement timeout', () => {
  it('takes 0 for none (a PgBouncer that refuses the statement_timeout startup parameter)', () => {
    expect(loadConfig({ DATABASE_STATEMENT_TIMEOUT_MS: '0' }).worker.statementTimeoutMs).toBe(0);
    expect(loadClientConfig({ DATABASE_STATEMENT_TIMEOUT_MS: '0' }).worker.statementTimeoutMs).toBe(0);
  });
});

describe('pool room', () => {
  it('refuses as many batched statements as pool connections (renewals would wait behind writes), in workers and clients alike', () => {
    const tight = { DATABASE_POOL_SIZE: '2', DATABASE_BATCH_STATEMENTS: '2' };
    for (const load of [loadConfig, loadClientConfig]) {
      expect(() => load(tight)).toThrowError(expect.objectContaining({ code: 'config.invalid', message: expect.stringContaining('DATABASE_BATCH_STATEMENTS: must be below DATABASE_POOL_SIZE (2), got 2'), details: { variables: ['DATABASE_BATCH_STATEMENTS', 'DATABASE_POOL_SIZE'] } }));
    }
    expect(loadConfig({ DATABASE_POOL_SIZE: '3', DATABASE_BATCH_STATEMENTS: '2' }).worker).toMatchObject({ poolSize: 3, batch: { maxInFlight: 2 } });
  });
});

describe('loadClientConfig', () => {
  it('does not refuse a producer for a worker-only LLM setting', () => {
    expect(() => loadConfig({ LLM_PROVIDER: 'openai' })).toThrowError(/OPENAI_API_KEY/);
    const config = loadClientConfig({ LLM_PROVIDER: 'openai', LOOPFLEET_QUEUE: 'q1' });
    expect(config.queueName).toBe('q1');
  });

  it('ignores the model request timeout, which only a worker uses', () => {
    expect(() => loadConfig({ LLM_REQUEST_TIMEOUT_MS: 'soon' })).toThrowError(/LLM_REQUEST_TIMEOUT_MS/);
    expect(loadClientConfig({ LLM_REQUEST_TIMEOUT_MS: 'soon', LOOPFLEET_QUEUE: 'q1' }).queueName).toBe('q1');
  });

  it('still validates everything else', () => {
    expect(() => loadClientConfig({ REDIS_URL: 'http://nope', LLM_PROVIDER: 'openai' })).toThrowError(/REDIS_URL/);
  });

  it("ignores the workers' logging, metrics and tuning variables, which a host application may set for itself", () => {
    const env = { LOG_LEVEL: 'warning', LOG_FORMAT: 'text', LOG_CONTENT: 'maybe', METRICS_PORT: 'http', WORKER_CONCURRENCY: 'many', LEASE_TTL_MS: '5', LOOPFLEET_QUEUE: 'q1' };
    expect(() => loadConfig(env)).toThrowError(/LOG_LEVEL/);
    expect(loadClientConfig(env).queueName).toBe('q1');
  });

  it('reads and validates exactly the variables a client uses (docs/client.md, SessionQueue.fromEnv)', () => {
    const bad = {
      DATABASE_URL: 'mysql://db/app',
      REDIS_URL: 'http://cache',
      REDIS_CLUSTER_NODES: 'cache',
      LOOPFLEET_QUEUE: 'a:b',
      LOOPFLEET_QUEUE_SHARDS: '0',
      LOOPFLEET_MAX_INPUT_BYTES: '0',
      DATABASE_POOL_SIZE: '0',
      DATABASE_POOLER: 'yes',
      DATABASE_BATCH_SIZE: 'x',
      DATABASE_BATCH_STATEMENTS: '0',
      DATABASE_STATEMENT_TIMEOUT_MS: '10',
      LOOPFLEET_EVENTS_MAXLEN: '5',
      LOOPFLEET_EVENTS_TTL_SECONDS: '1',
      FAIR_DISPATCH: 'maybe',
    };
    let error: unknown;
    try {
      loadClientConfig(bad);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ConfigInvalidError);
    expect([...((error as ConfigInvalidError).details['variables'] as string[])].sort()).toEqual(Object.keys(bad).sort());
    expect([...CLIENT_VARIABLES].sort()).toEqual(Object.keys(bad).sort());
    const config = loadClientConfig({
      DATABASE_URL: 'postgres://u@db/app',
      REDIS_URL: 'redis://cache:6380',
      LOOPFLEET_QUEUE: 'q2',
      LOOPFLEET_MAX_INPUT_BYTES: '2048',
      DATABASE_POOL_SIZE: '3',
      DATABASE_POOLER: 'Transaction',
      DATABASE_BATCH_SIZE: '8',
      DATABASE_BATCH_STATEMENTS: '1',
      DATABASE_STATEMENT_TIMEOUT_MS: '5000',
      LOOPFLEET_EVENTS_MAXLEN: '500',
      LOOPFLEET_EVENTS_TTL_SECONDS: '3600',
      FAIR_DISPATCH: 'false',
    });
    expect(config).toMatchObject({
      fairDispatch: false,
      databaseUrl: 'postgres://u@db/app',
      redisUrl: 'redis://cache:6380',
      queueName: 'q2',
      worker: { maxInputBytes: 2048, poolSize: 3, pooler: 'transaction', statementTimeoutMs: 5000, batch: { maxSize: 8, maxInFlight: 1 } },
      events: { maxLen: 500, idleExpirySeconds: 3600 },
    });
  });
});
