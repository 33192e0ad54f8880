import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../../../src/cli/run-cli.js';
import { ConfigInvalidError } from '../../../src/core/errors/index.js';
import { configuredSecrets, loadConfig } from '../../../src/config/index.js';
import { configError } from './config-error.js';

const OPENAI_KEY = 'sk-test-openai-from-file-0123456789';
const ANTHROPIC_KEY = 'sk-ant-test-from-file-0123456789';

const dir = mkdtempSync(join(tmpdir(), 'loopfleet-key-files-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A file holding `contents`, as a compose secret mounts it. */
function secretFile(name: string, contents: string): string {
  const path = join(dir, name);
  writeFileSync(path, contents);
  return path;
}


describe('API keys from files (OPENAI_API_KEY_FILE, ANTHROPIC_API_KEY_FILE)', () => {
  it('reads each key from its file, trimmed, and infers the provider from it as from the key itself', () => {
    const config = loadConfig({ OPENAI_API_KEY_FILE: secretFile('openai', `${OPENAI_KEY}\n`), ANTHROPIC_API_KEY_FILE: secretFile('anthropic', `  ${ANTHROPIC_KEY}\r\n`) });
    expect(config.llm.provider).toBe('openai');
    expect(config.llm.openai.apiKey).toBe(OPENAI_KEY);
    expect(config.llm.anthropic.apiKey).toBe(ANTHROPIC_KEY);
    // A key read from a file is a configured secret like one from the environment: scrubbed from text.
    expect(configuredSecrets(config)).toEqual(expect.arrayContaining([OPENAI_KEY, ANTHROPIC_KEY]));
  });

  it('an empty file variable counts as unset', () => {
    expect(loadConfig({ OPENAI_API_KEY_FILE: '  ', OPENAI_API_KEY: OPENAI_KEY }).llm.openai.apiKey).toBe(OPENAI_KEY);
    expect(loadConfig({ ANTHROPIC_API_KEY_FILE: '' }).llm.provider).toBe('scripted');
  });

  it.each([
    ['a missing file', () => join(dir, 'absent'), 'cannot read the file it names (ENOENT)'],
    ['a directory', () => (mkdirSync(join(dir, 'folder'), { recursive: true }), join(dir, 'folder')), 'cannot read the file it names (EISDIR)'],
    ['an empty file', () => secretFile('empty', ''), 'the file it names is empty'],
    ['a file of blank lines', () => secretFile('blank', '\n \n'), 'the file it names is empty'],
  ])('refuses %s as config.invalid naming the variable, and no other problem for the key', (_, path, message) => {
    const error = configError({ LLM_PROVIDER: 'openai', OPENAI_API_KEY_FILE: path() });
    expect(error.code).toBe('config.invalid');
    expect(error.message).toContain(`OPENAI_API_KEY_FILE: ${message}`);
    expect(error.details).toMatchObject({ variables: ['OPENAI_API_KEY_FILE'] });
  });

  // root reads any file: the check holds only for other users.
  it.skipIf(process.getuid?.() === 0)('refuses an unreadable file', () => {
    const path = secretFile('unreadable', ANTHROPIC_KEY);
    chmodSync(path, 0o000);
    expect(configError({ ANTHROPIC_API_KEY_FILE: path }).message).toContain('ANTHROPIC_API_KEY_FILE: cannot read the file it names (EACCES)');
  });

  it('refuses a key set both ways', () => {
    const error = configError({ ANTHROPIC_API_KEY: ANTHROPIC_KEY, ANTHROPIC_API_KEY_FILE: secretFile('both', ANTHROPIC_KEY) });
    expect(error.message).toContain('ANTHROPIC_API_KEY_FILE: set ANTHROPIC_API_KEY or ANTHROPIC_API_KEY_FILE, not both');
    expect(error.message).not.toContain(ANTHROPIC_KEY);
  });

  it('reports a bad key file beside every other bad variable, in one error', () => {
    const error = configError({ OPENAI_API_KEY_FILE: join(dir, 'absent'), WORKER_CONCURRENCY: 'many' });
    expect(error.details).toMatchObject({ variables: ['OPENAI_API_KEY_FILE', 'WORKER_CONCURRENCY'] });
  });

  it('never shows the file variable’s value: a key pasted there by mistake stays out of the message', () => {
    const error = configError({ OPENAI_API_KEY_FILE: OPENAI_KEY });
    expect(error.message).toContain('OPENAI_API_KEY_FILE: cannot read the file it names (ENOENT)');
    expect(error.message).not.toContain(OPENAI_KEY);
    expect(JSON.stringify(error.details)).not.toContain(OPENAI_KEY);
  });

  it('`loopfleet worker` with a missing key file exits 1 naming the variable, before connecting', async () => {
    const err: string[] = [];
    // Nothing listens on port 1: had the worker got as far as connecting, the error would say so.
    const env = { DATABASE_URL: 'postgres://x@127.0.0.1:1/db', REDIS_URL: 'redis://127.0.0.1:1', OPENAI_API_KEY_FILE: join(dir, 'absent') };
    const code = await runCli(['worker'], { stdout: () => undefined, stderr: (text) => void err.push(text), env });
    expect(code).toBe(1);
    expect(err.join('')).toContain('[config.invalid]');
    expect(err.join('')).toContain('OPENAI_API_KEY_FILE: cannot read the file it names (ENOENT)');
    expect(err.join('')).not.toContain('ECONNREFUSED');
  });
});
