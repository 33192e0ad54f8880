/**
 * The child side of the harness's processes: `serveBenchChild` from `bench/lib/serve-child.ts`, which
 * imports nothing of loopfleet (unlike `bench/lib/bench-child.ts`'s import of `fleet.ts`), so a peer's
 * worker and producer processes load only what their own system needs.
 */
export { serveBenchChild as serve } from '../../lib/serve-child.js';
