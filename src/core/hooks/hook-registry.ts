import type { HookContext, HookDirective, HookHandler, HookPoint } from './hook-points.js';

interface Registration {
  point: HookPoint;
  name: string;
  order: number;
  index: number;
  handler: HookHandler<HookPoint>;
}

export interface RegisterOptions {
  /** Lower runs first; ties run in registration order. Default 0. */
  order?: number;
  /** Unique name, for `remove`/`has`; defaults to `<point>#<n>`. */
  name?: string;
  /** Replace an existing registration of the same name instead of failing. */
  replace?: boolean;
}

/**
 * Hooks: control flow around the loop (events are for observing, hooks for steering). A throwing
 * handler propagates: the loop ends the input as `failed` with an `agent_error` event, and never
 * leaves the history invalid because every early exit closes open tool calls first.
 */
export class HookRegistry {
  readonly #registrations: Registration[] = [];
  #counter = 0;

  register<P extends HookPoint>(point: P, handler: HookHandler<P>, options: RegisterOptions = {}): this {
    const name = options.name ?? `${point}#${this.#counter}`;
    const existing = this.#registrations.findIndex((entry) => entry.name === name);
    if (existing >= 0) {
      if (options.replace !== true) throw new Error(`a hook named "${name}" is already registered`);
      this.#registrations.splice(existing, 1);
    }
    this.#registrations.push({ point, name, order: options.order ?? 0, index: this.#counter++, handler: handler as HookHandler<HookPoint> });
    return this;
  }

  remove(name: string): boolean {
    const index = this.#registrations.findIndex((entry) => entry.name === name);
    if (index < 0) return false;
    this.#registrations.splice(index, 1);
    return true;
  }

  has(name: string): boolean {
    return this.#registrations.some((entry) => entry.name === name);
  }

  /** Whether any handler is registered at `point` (lets the loop skip building contexts). */
  handles(point: HookPoint): boolean {
    return this.#registrations.some((entry) => entry.point === point);
  }

  /**
   * Runs the handlers of `point` in order. The first directive other than `continue` stops the
   * chain and is returned; `ctx` carries whatever the handlers changed.
   */
  async run<P extends HookPoint>(point: P, ctx: HookContext<P>): Promise<HookDirective> {
    const handlers = this.#registrations
      .filter((entry) => entry.point === point)
      .sort((a, b) => a.order - b.order || a.index - b.index);
    for (const entry of handlers) {
      ctx.directive = undefined;
      const returned = await entry.handler(ctx as HookContext<HookPoint>);
      const directive = returned ?? ctx.directive ?? 'continue';
      if (directive !== 'continue') return directive;
    }
    return 'continue';
  }
}
