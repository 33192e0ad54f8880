import { InfrastructureError } from '../../../src/core/errors/index.js';
import type { SessionStore, StepCommit, StepCommitResult } from '../../../src/core/ports/session-store.js';

/** Thrown by a store that has "crashed": the process is gone, nothing more is written. */
export class SimulatedCrash extends InfrastructureError {
  constructor() {
    super('simulated crash');
  }
}

/**
 * Wraps a store so that the worker "dies" after `commitsBeforeCrash` successful step commits: the
 * next commit and every one after it throw without writing, exactly as if the process had been
 * killed between two steps. Reads still work, so the harness can release its lease.
 */
export function crashAfterCommits(inner: SessionStore, commitsBeforeCrash: number): SessionStore & { crashed(): boolean } {
  let commits = 0;
  let crashed = false;
  return new Proxy(inner, {
    get(target, property, receiver) {
      if (property === 'crashed') return () => crashed;
      if (property === 'commitStep') {
        return async (step: StepCommit): Promise<StepCommitResult> => {
          if (crashed || commits >= commitsBeforeCrash) {
            crashed = true;
            throw new SimulatedCrash();
          }
          commits += 1;
          return target.commitStep(step);
        };
      }
      const value = Reflect.get(target, property, receiver) as unknown;
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  }) as SessionStore & { crashed(): boolean };
}
