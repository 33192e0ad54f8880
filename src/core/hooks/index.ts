export * from './hook-points.js';
export * from './hook-registry.js';
