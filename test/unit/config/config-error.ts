import { expect } from 'vitest';
import { loadConfig } from '../../../src/config/load-config.js';
import { ConfigInvalidError } from '../../../src/core/errors/index.js';

/** Runs `loadConfig` expecting a failure, and returns the error for inspection. */
export function configError(env: NodeJS.ProcessEnv): ConfigInvalidError {
  try {
    loadConfig(env);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigInvalidError);
    return error as ConfigInvalidError;
  }
  throw new Error('loadConfig accepted an invalid environment');
}
