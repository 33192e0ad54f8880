import { describe, expect, it } from 'vitest';
import { checkedAgentProfile, DEFAULT_AGENT_PROFILE } from '../../../src/core/agent-profile.js';

const refusal = (profile: unknown) => {
  try {
    checkedAgentProfile(profile);
  } catch (error) {
    return error as { code: string; message: string; details: { problems: string[] } };
  }
  throw new Error('expected config.invalid');
};

describe('checkedAgentProfile (startWorker’s profile)', () => {
  it('fills the defaults and keeps what is given', () => {
    expect(checkedAgentProfile()).toEqual(DEFAULT_AGENT_PROFILE);
    expect(checkedAgentProfile({ maxRounds: 5, temperature: 0.2, responseFormat: { name: 'answer', schema: { type: 'object' } } })).toMatchObject({
      maxRounds: 5,
      temperature: 0.2,
      responseFormat: { name: 'answer' },
      toolConcurrency: 4,
    });
  });

  it.each([
    ['toolConcurrency', { toolConcurrency: 0 }],
    ['maxToolResultChars', { maxToolResultChars: 10 }],
    ['temperature', { temperature: 3 }],
    ['maxRounds', { maxRounds: 1.5 }],
    ['compactTriggerRatio', { compactTriggerRatio: 0 }],
    ['model', { model: '' }],
  ])('refuses a bad %s with config.invalid naming it', (field, profile) => {
    const error = refusal(profile);
    expect(error.code).toBe('config.invalid');
    expect(error.details.problems.some((problem) => problem.startsWith(`${field}:`))).toBe(true);
  });

  it('refuses an unknown field (a typo would otherwise be ignored) and a profile that is not an object', () => {
    expect(refusal({ maxRound: 5 }).message).toMatch(/maxRound/);
    expect(refusal('fast').code).toBe('config.invalid');
  });
});
