/**
 * A keel worker: the agent loop's workflow code plus the activities for a set of agents.
 *
 *   import { createWorker } from 'keel';
 *   const worker = await createWorker({ agents: [myAgent] });
 *   await worker.run();
 */
import { Client } from '@temporalio/client';
import { NativeConnection, Worker, type InjectedSinks, type WorkerOptions } from '@temporalio/worker';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { AgentRegistry, ConversationCache, createActivities, runKey } from './activities/index.js';
import { loadConnectConfig, ServerUnreachableError, type ConnectSettings } from './client/connection.js';
import type { AgentDefinition } from './core/define.js';
import type { ModelProvider } from './core/model.js';
import { createProviderRegistry, type ProvidersConfig } from './providers/index.js';
import { DEFAULT_TASK_QUEUE, type KeelSinks } from './workflows/api.js';

export const workflowsPath = fileURLToPath(new URL('./workflows/index.ts', import.meta.url));

export interface CreateWorkerOptions {
  agents: AgentDefinition[];
  taskQueue?: string;
  /** Connection settings; default: Temporal's environment configuration (TEMPORAL_ADDRESS, ...). */
  connection?: ConnectSettings | NativeConnection;
  namespace?: string;
  /** API keys and base URLs of the providers; default: the worker's environment. */
  providers?: ProvidersConfig | { get(provider: string): ModelProvider };
  /** Pre-built workflow code (`bundleWorkflowCode({ workflowsPath })`), to skip bundling at start. */
  workflowBundle?: WorkerOptions['workflowBundle'];
  /** Anything else for the Temporal worker (concurrency, tuning, interceptors). */
  workerOptions?: Partial<WorkerOptions>;
}

export interface KeelWorker {
  worker: Worker;
  taskQueue: string;
  run(): Promise<void>;
  shutdown(): void;
}

export async function createWorker(options: CreateWorkerOptions): Promise<KeelWorker> {
  const registry = new AgentRegistry(options.agents);
  const taskQueue = options.taskQueue ?? DEFAULT_TASK_QUEUE;
  const { nativeConnection, namespace, ownsConnection } = await nativeConnect(options);
  // Model activities query their own run on a cache miss; that takes a client.
  const client = new Client({ connection: nativeConnection, namespace });

  const cache = new ConversationCache();
  const providers =
    options.providers && 'get' in options.providers && typeof options.providers.get === 'function'
      ? (options.providers as { get(provider: string): ModelProvider })
      : createProviderRegistry(options.providers as ProvidersConfig | undefined);
  const sinks: InjectedSinks<KeelSinks> = {
    conversation: {
      append: {
        fn: (info, start, messages) => cache.append(runKey(info.workflowId, info.runId), start, messages),
        callDuringReplay: false,
      },
      continued: {
        fn: (info, previousRunId) => cache.rename(runKey(info.workflowId, previousRunId), runKey(info.workflowId, info.runId)),
        callDuringReplay: false,
      },
    },
  };

  const worker = await Worker.create({
    connection: nativeConnection,
    namespace,
    taskQueue,
    ...(options.workflowBundle ? { workflowBundle: options.workflowBundle } : { workflowsPath }),
    activities: createActivities({ registry, providers, client, cache }),
    sinks,
    ...options.workerOptions,
  });

  return {
    worker,
    taskQueue,
    async run() {
      try {
        await worker.run();
      } finally {
        if (ownsConnection) await nativeConnection.close();
      }
    },
    shutdown: () => worker.shutdown(),
  };
}

async function nativeConnect(options: CreateWorkerOptions) {
  if (options.connection instanceof NativeConnection) {
    return { nativeConnection: options.connection, namespace: options.namespace ?? 'default', ownsConnection: false };
  }
  const config = loadConnectConfig({ ...options.connection, ...(options.namespace && { namespace: options.namespace }) });
  try {
    const nativeConnection = await NativeConnection.connect(config.connectionOptions);
    return { nativeConnection, namespace: config.namespace, ownsConnection: true };
  } catch (err) {
    throw new ServerUnreachableError(config.connectionOptions.address ?? 'localhost:7233', err);
  }
}

// Run as a program (`tsx src/worker.ts [agents-module]`): a worker, like `keel worker --agents`.
// No top-level await: the CLI imports this module back, and would wait for itself.
if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const module = process.argv[2];
  void import('./client/cli/program.js')
    .then(({ main }) => main([process.argv[0]!, 'keel', 'worker', ...(module ? ['--agents', module] : [])]))
    .then((code) => process.exit(code));
}
