/**
 * A Temporal dev server of a benchmark's own, started through temporal-dev.sh on its own ports
 * with its own state directory (.temporal/bench), from an empty database, and stopped at the end.
 */
import { execFileSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));
export const BENCH_STATE = `${root}.temporal/bench`;

/**
 * The dev server's history service reads its transfer queue (the tasks that hand workflow and
 * activity tasks to matching) at most 20 times a second by default
 * (history.transferProcessorMaxPollRPS). A single sequential run needs about 4 reads per turn, so
 * at the default every turn takes ~200 ms whatever the workflow does (~100 ms with eager
 * activities), after a burst of about a second. The benchmarks raise the limit so that they
 * measure orchestration, not that limiter; BENCH_STOCK_LIMITS=1 keeps the stock value.
 */
export const LIMIT_FLAGS =
  process.env.BENCH_STOCK_LIMITS === '1' ? '' : '--dynamic-config-value history.transferProcessorMaxPollRPS=10000';

export interface DevServer {
  address: string;
  port: number;
  flags: string;
  stop(): void;
}

const started = new Set<DevServer>();
let hooked = false;

/** Stops every server this process started; safe to call twice. */
export function stopAllDevServers(): void {
  for (const server of [...started]) server.stop();
}

function hookExit(): void {
  if (hooked) return;
  hooked = true;
  process.on('exit', stopAllDevServers);
  for (const [signal, code] of [['SIGINT', 130], ['SIGTERM', 143]] as const) {
    process.on(signal, () => {
      stopAllDevServers();
      process.exit(code);
    });
  }
}

export function startDevServer(options: { port: number; uiPort: number; flags?: string }): DevServer {
  const env = {
    ...process.env,
    TEMPORAL_PORT: String(options.port),
    TEMPORAL_UI_PORT: String(options.uiPort),
    KEEL_TEMPORAL_STATE: BENCH_STATE,
    KEEL_DEV_SERVER_FLAGS: [LIMIT_FLAGS, options.flags ?? ''].join(' ').trim(),
  };
  const script = (command: string, quiet = false) =>
    execFileSync('./temporal-dev.sh', [command], { cwd: root, env, stdio: quiet ? 'ignore' : ['ignore', 'ignore', 'inherit'] });

  // A server of ours left over from an interrupted benchmark is stopped; one that is not ours
  // (no pid file in our state directory) makes us stop here rather than measure someone else's.
  script('stop', true);
  let busy = true;
  try {
    script('status', true);
  } catch {
    busy = false;
  }
  if (busy) {
    throw new Error(
      `Port ${options.port} already has a Temporal server that this benchmark did not start; stop it or free the port.`,
    );
  }
  // An empty database each time, so every benchmark run measures the same thing.
  for (const suffix of ['', '-wal', '-shm', '-journal']) rmSync(`${BENCH_STATE}/dev-${options.port}.db${suffix}`, { force: true });

  hookExit();
  script('start');
  let stopped = false;
  const server: DevServer = {
    address: `127.0.0.1:${options.port}`,
    port: options.port,
    flags: [LIMIT_FLAGS, options.flags ?? ''].join(' ').trim(),
    stop() {
      if (stopped) return;
      stopped = true;
      started.delete(server);
      try {
        script('stop');
      } catch (err) {
        console.error(`could not stop the dev server on ${options.port}: ${(err as Error).message}`);
      }
    },
  };
  started.add(server);
  return server;
}
