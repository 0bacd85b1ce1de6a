/**
 * A keel worker: the agent loop's workflow code plus the activities for a set of agents.
 *
 *   import { createWorker } from 'keel';
 *   const worker = await createWorker({ agents: [myAgent] });
 *   await worker.run();
 */
import { Client } from '@temporalio/client';
import { NativeConnection, Runtime, Worker, bundleWorkflowCode, type InjectedSinks, type WorkerOptions } from '@temporalio/worker';
import { fileURLToPath } from 'node:url';
import { AgentRegistry, ConversationCache, createActivities, runKey, type WorkflowBundle } from './activities/index.js';
import { loadConnectConfig, ServerUnreachableError, type ConnectSettings } from './client/connection.js';
import type { Approver } from './core/approval.js';
import type { AgentDefinition } from './core/define.js';
import type { ModelProvider } from './core/model.js';
import { createProviderRegistry, type ProvidersConfig } from './providers/index.js';
import { DEFAULT_TASK_QUEUE, type KeelSinks } from './workflows/api.js';

/**
 * The workflow code the worker bundles: `dist/src/workflows/index.js` when keel runs compiled (an
 * installed package, `node_modules/.bin/keel`), `src/workflows/index.ts` when it runs from its
 * sources (the repo's tests). Temporal's bundler compiles no TypeScript under node_modules.
 */
export const workflowsPath = fileURLToPath(
  new URL(`./workflows/index${import.meta.url.endsWith('.ts') ? '.ts' : '.js'}`, import.meta.url),
);

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
  /**
   * Decides calls that need approval before a person is asked (run as an activity, its answer
   * recorded). Returning nothing leaves the call waiting for a person.
   */
  approver?: Approver;
}

export interface KeelWorker {
  worker: Worker;
  taskQueue: string;
  /** Polls until shutdown() (or a fatal error); then closes the connection it opened. */
  run(): Promise<void>;
  /**
   * Runs the worker until `fnOrPromise` settles, then shuts it down and waits for it to stop, as
   * Temporal's `Worker.runUntil`: resolves to the promise's value, or rejects with its error (or
   * the worker's, when the worker fails first).
   */
  runUntil<R>(fnOrPromise: Promise<R> | (() => Promise<R>)): Promise<R>;
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
      carried: {
        fn: (info, segments) => {
          for (const s of segments) cache.fill(runKey(info.workflowId, info.runId), s.start, s.messages);
        },
        callDuringReplay: false,
      },
    },
  };
  // Bundled once: the worker runs it, and the model activity replays histories with it on a cache miss.
  const { workflowsPath: ownPath, workflowBundle: ownBundle, ...workerOptions } = options.workerOptions ?? {};
  const workflowBundle: WorkflowBundle = options.workflowBundle ?? ownBundle ?? (await bundle(ownPath ?? workflowsPath, workerOptions));

  const worker = await Worker.create({
    connection: nativeConnection,
    namespace,
    taskQueue,
    workflowBundle,
    activities: createActivities({ registry, providers, client, cache, workflowBundle, ...(options.approver && { approver: options.approver }) }),
    sinks,
    ...workerOptions,
  });

  /** The connection is ours to close when we opened it, once the worker has stopped. */
  async function closingConnection<R>(running: Promise<R>): Promise<R> {
    try {
      return await running;
    } finally {
      if (ownsConnection) await nativeConnection.close();
    }
  }

  return {
    worker,
    taskQueue,
    run: () => closingConnection(worker.run()),
    runUntil: (fnOrPromise) => closingConnection(worker.runUntil(fnOrPromise)),
    shutdown: () => worker.shutdown(),
  };
}

/** The workflow code as Worker.create would bundle it from the same options. */
function bundle(path: string, options: Partial<WorkerOptions>): Promise<WorkflowBundle> {
  return bundleWorkflowCode({
    workflowsPath: path,
    logger: Runtime.instance().logger,
    ...(options.interceptors?.workflowModules && { workflowInterceptorModules: options.interceptors.workflowModules }),
    ...(options.dataConverter?.payloadConverterPath && { payloadConverterPath: options.dataConverter.payloadConverterPath }),
    ...(options.dataConverter?.failureConverterPath && { failureConverterPath: options.dataConverter.failureConverterPath }),
    ...(options.bundlerOptions?.ignoreModules && { ignoreModules: options.bundlerOptions.ignoreModules }),
    ...(options.bundlerOptions?.webpackConfigHook && { webpackConfigHook: options.bundlerOptions.webpackConfigHook }),
  });
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
