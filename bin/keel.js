#!/usr/bin/env node
// The keel CLI, compiled to dist/ by `npm run build` (npm test, npm start and npm pack build it
// in the repo; the published package ships it). Plain node: no TypeScript loader at run time.
import { existsSync } from 'node:fs';

const cli = new URL('../dist/src/client/cli.js', import.meta.url);
if (!existsSync(cli)) {
  process.stderr.write(`keel: the compiled CLI is missing (${cli.pathname}). Build it with: npm run build\n`);
  process.exit(1);
}
await import(cli.href);
