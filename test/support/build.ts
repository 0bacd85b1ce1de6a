/**
 * Compiles keel to dist/ before the tests (`npm run build`): the CLI tests run bin/keel.js, which
 * runs the compiled code, and the package test packs dist/. `tsc -b` skips an up-to-date build
 * in a fraction of a second, so every `vitest run` tests the code as it is now.
 */
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));

export default function build(): void {
  const tsc = fileURLToPath(new URL('../../node_modules/typescript/bin/tsc', import.meta.url));
  execFileSync(process.execPath, [tsc, '-b', 'tsconfig.build.json'], { cwd: root, stdio: 'inherit' });
}
