export * from './errors.js';
export * from './registry.js';
export * from './sessions.js';
export * from './users.js';
