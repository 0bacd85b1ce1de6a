#!/usr/bin/env node
// The keel CLI. It runs from the TypeScript sources, through tsx's ESM loader.
import { register } from 'tsx/esm/api';

register();
await import('../src/client/cli.ts');
