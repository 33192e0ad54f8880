import { describe, expect, it } from 'vitest';
import { defaultLogFormat, loadConfig } from '../../../src/config/index.js';

describe('LOG_FORMAT', () => {
  it('defaults to pretty at a terminal and json lines otherwise', () => {
    expect(defaultLogFormat(true)).toBe('pretty');
    expect(defaultLogFormat(false)).toBe('json');
  });

  it('an explicit value wins over the terminal check', () => {
    expect(loadConfig({ LOG_FORMAT: 'json' }).log.format).toBe('json');
    expect(loadConfig({ LOG_FORMAT: 'PRETTY' }).log.format).toBe('pretty');
    expect(loadConfig({}).log.format).toBe(defaultLogFormat(process.stdout.isTTY === true));
  });

  it('a bad value is config.invalid naming the variable', () => {
    expect(() => loadConfig({ LOG_FORMAT: 'xml' })).toThrow(expect.objectContaining({ code: 'config.invalid', message: expect.stringContaining('LOG_FORMAT') }));
  });
});
