import { describe, expect, it } from 'vitest';
import { runCli } from '../../../src/cli/run-cli.js';
import { parseSubmitValue } from '../../../src/cli/submit-value.js';

/** `loopfleet submit-input`'s value: JSON when it parses exactly, the text itself otherwise. */
describe('parseSubmitValue', () => {
  it.each([
    ['42', 42],
    ['-7', -7],
    ['1.5', 1.5],
    ['1.50', 1.5],
    ['0.1', 0.1],
    ['1e3', 1000],
    ['2.5E-3', 0.0025],
    ['0.0000001', 1e-7],
    ['-0', -0],
    ['0e999999', 0],
    ['123456789.125', 123456789.125],
    ['9007199254740992', 9007199254740992],
    ['true', true],
    ['null', null],
    ['"quoted 12345678901234567890"', 'quoted 12345678901234567890'],
    ['{"a":1,"b":[2.25,"x\\"9"]}', { a: 1, b: [2.25, 'x"9'] }],
  ])('%s is sent as its JSON value', (raw, expected) => {
    expect(parseSubmitValue(raw)).toStrictEqual(expected);
  });

  it.each([
    'yes',
    'blue sky',
    '',
    '{not json',
    // A JS number would change these: the text itself keeps every digit.
    '12345678901234567890',
    '-12345678901234567890',
    '0.1000000000000000055511151231257827',
    '9007199254740993',
    '9007199254740993e-1',
    '1e400',
    '-1e400',
    '1e-400',
    '{"amount":12345678901234567890}',
    '[1, 0.1000000000000000055511151231257827]',
  ])('%j is sent as the text itself', (raw) => {
    expect(parseSubmitValue(raw)).toBe(raw);
  });

  it('the help says so', async () => {
    const out: string[] = [];
    expect(await runCli(['help', 'submit-input'], { stdout: (text) => void out.push(text), stderr: () => {}, env: {} })).toBe(0);
    expect(out.join('').replace(/\s+/g, ' ')).toContain('else taken as text; so is JSON with a number a JS number would change (12345678901234567890, 0.1000000000000000055511151231257827): every digit is kept.');
  });
});
