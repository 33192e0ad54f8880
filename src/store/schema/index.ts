export * from './sessions.js';
export * from './session-inputs.js';
export * from './messages.js';
export * from './tool-calls.js';
export * from './timers.js';
export * from './usage-rounds.js';
export * from './compactions.js';
export * from './agent-registry.js';
