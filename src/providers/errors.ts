/**
 * Provider errors, classified once for every adapter (see \`classify.ts\`). This module gathers
 * the four that hold them: their names and types (\`error-names.ts\`), Retry-After
 * (\`retry-after.ts\`), classification (\`classify.ts\`) and the call (\`call.ts\`).
 */
export * from './error-names.js';
export * from './retry-after.js';
export { classifyProviderError, isAbortError } from './classify.js';
export * from './call.js';
