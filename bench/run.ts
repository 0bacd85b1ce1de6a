/**
 * Runs every benchmark, one after the other, each in its own process (each starts and stops its
 * own Temporal dev server): `npm run bench`. Pass names to run some only: `npm run bench -- history-growth`.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const BENCHMARKS = ['turn-overhead', 'history-growth', 'resume-after-kill', 'monitor-1000-turns', 'sleeping-monitors', 'approvals', 'teams', 'session-growth', 'stream-latency'];

let child: ChildProcess | undefined;
let interrupted = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    interrupted = true;
    // The benchmark stops its dev servers on this signal, then exits.
    child?.kill(signal);
  });
}

function run(name: string): Promise<number> {
  const file = fileURLToPath(new URL(`./${name}.ts`, import.meta.url));
  return new Promise((resolve) => {
    child = spawn(process.execPath, ['--import', 'tsx', file], { stdio: 'inherit' });
    child.on('exit', (code, signal) => resolve(code ?? (signal ? 128 : 1)));
    child.on('error', (err) => {
      console.error(err);
      resolve(1);
    });
  });
}

const wanted = process.argv.slice(2);
const selected = wanted.length > 0 ? BENCHMARKS.filter((name) => wanted.includes(name)) : BENCHMARKS;
if (selected.length === 0) {
  console.error(`No benchmark named ${wanted.join(', ')}; there are: ${BENCHMARKS.join(', ')}.`);
  process.exit(2);
}

const failed: string[] = [];
for (const name of selected) {
  const started = Date.now();
  console.log(`\n=== bench/${name}.ts ===\n`);
  const code = await run(name);
  console.log(`\n(bench/${name}.ts: ${code === 0 ? 'done' : `FAILED with exit code ${code}`} in ${((Date.now() - started) / 1000).toFixed(0)} s)`);
  if (code !== 0) failed.push(name);
  if (interrupted) break;
}
child = undefined;
if (failed.length > 0) {
  console.error(`\nFailed: ${failed.join(', ')}`);
  process.exit(1);
}
