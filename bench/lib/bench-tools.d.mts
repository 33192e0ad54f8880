/** Types of `bench-tools.mjs` (plain JavaScript, so a compiled worker can load it). */
import type { AnyToolDefinition } from '../../src/core/tools/index.js';

declare const tools: AnyToolDefinition[];
export default tools;
