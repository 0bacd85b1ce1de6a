/** The workflows a keel worker registers. Workflow code only: no I/O, clocks, random or Node APIs. */
export { agentRun } from './agent-run.js';
export { agentMonitor } from './agent-monitor.js';
export { agentSession } from './agent-session.js';
