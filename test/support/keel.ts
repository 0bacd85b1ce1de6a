/** Test harness: a keel worker and client on the tests' dev server, with the scripted model server. */
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { DefaultLogger, Runtime, bundleWorkflowCode, type WorkflowBundleWithSourceMap } from '@temporalio/worker';
import { randomUUID } from 'node:crypto';
import { AgentClient } from '../../src/client/agent-client.js';
import type { Approver } from '../../src/core/approval.js';
import type { AgentDefinition } from '../../src/core/define.js';
import type { ProvidersConfig } from '../../src/providers/index.js';
import { createWorker, keelBundleOptions, type CreateWorkerOptions, type KeelWorker } from '../../src/worker.js';
import { afterAll, beforeAll } from 'vitest';
import { startModelServer, type ModelServer } from './model-server.js';
import { quietLogger } from './quiet-logger.js';

export const TEMPORAL_ADDRESS = `127.0.0.1:${process.env.KEEL_TEST_TEMPORAL_PORT ?? '7433'}`;

// Worker lifecycle chatter drowns the test output; warnings and errors still show.
Runtime.install({ logger: new DefaultLogger('WARN') });

let bundle: Promise<WorkflowBundleWithSourceMap> | undefined;

/** Bundled once per test file: bundling takes seconds, and every worker can share it. */
export function workflowBundle(): Promise<WorkflowBundleWithSourceMap> {
  bundle ??= bundleWorkflowCode({ ...keelBundleOptions, logger: quietLogger });
  return bundle;
}

export function providersFor(server: ModelServer): ProvidersConfig {
  return {
    openai: { apiKey: 'test-key', baseURL: server.openaiBaseURL },
    anthropic: { apiKey: 'test-key', baseURL: server.anthropicBaseURL },
  };
}

export interface Keel {
  env: TestWorkflowEnvironment;
  client: AgentClient;
  worker: KeelWorker;
  taskQueue: string;
  /** Stops the worker (waiting for it) and closes the connections. */
  stop(): Promise<void>;
}

export async function startKeel(options: {
  agents: AgentDefinition[];
  providers?: ProvidersConfig;
  taskQueue?: string;
  workerOptions?: CreateWorkerOptions['workerOptions'];
  /** The worker's approver: decides calls that need approval before a person is asked. */
  approver?: Approver;
}): Promise<Keel> {
  const env = await TestWorkflowEnvironment.createFromExistingServer({ address: TEMPORAL_ADDRESS });
  const taskQueue = options.taskQueue ?? `test-${randomUUID().slice(0, 8)}`;
  const worker = await createWorker({
    agents: options.agents,
    connection: env.nativeConnection,
    namespace: 'default',
    taskQueue,
    providers: options.providers,
    workflowBundle: await workflowBundle(),
    ...(options.workerOptions && { workerOptions: options.workerOptions }),
    ...(options.approver && { approver: options.approver }),
  });
  const running = worker.run();
  const client = new AgentClient({ client: env.client, taskQueue });
  return {
    env,
    client,
    worker,
    taskQueue,
    async stop() {
      worker.shutdown();
      await running;
      await env.teardown();
    },
  };
}


/**
 * A worker approver that allows the demo agent's postcards (`send_postcard`, the one demo tool
 * that needs approval), as a team's approver would: for tests that run the demo agent to its
 * end without a person to decide.
 */
export const allowPostcards: Approver = (request) => (request.tool === 'send_postcard' ? { decision: 'allow', reason: 'postcards are fine' } : undefined);

/**
 * The usual set-up of a test file: a scripted model server and a keel worker for `agents`,
 * started before its tests and stopped after them. Read `server` and `keel` inside tests.
 */
export function useKeel(agents: AgentDefinition[], options: { approver?: Approver } = {}): { readonly server: ModelServer; readonly keel: Keel } {
  const context = {} as { server: ModelServer; keel: Keel };
  beforeAll(async () => {
    context.server = await startModelServer();
    context.keel = await startKeel({ agents, providers: providersFor(context.server), ...(options.approver && { approver: options.approver }) });
  });
  afterAll(async () => {
    await context.keel?.stop();
    await context.server?.close();
  });
  return context;
}
