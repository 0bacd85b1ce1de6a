import { ApplicationFailure } from '@temporalio/activity';
import type { AgentDefinition } from '../core/define.js';
import { ErrorTypes } from '../core/errors.js';

/** The agents a worker serves, by name. */
export class AgentRegistry {
  private readonly agents = new Map<string, AgentDefinition>();

  constructor(agents: Iterable<AgentDefinition>) {
    for (const agent of agents) {
      if (this.agents.has(agent.name)) throw new Error(`Two agents are named "${agent.name}"; agent names must be unique.`);
      this.agents.set(agent.name, agent);
    }
  }

  names(): string[] {
    return [...this.agents.keys()].sort();
  }

  find(name: string): AgentDefinition | undefined {
    return this.agents.get(name);
  }

  /**
   * For a run in flight: the agent, or a retryable failure that says the worker lacks it (a
   * deploy without it, a worker started with the wrong agents), so a fixed worker resumes the run.
   */
  serving(name: string): AgentDefinition {
    const agent = this.agents.get(name);
    if (agent) return agent;
    const known = this.names();
    throw ApplicationFailure.create({
      type: ErrorTypes.Config,
      message:
        `This worker does not serve agent "${name}", which a run in flight needs` +
        (known.length > 0 ? ` (it serves: ${known.join(', ')})` : '') +
        '. Start a worker that does, and the run goes on.',
    });
  }

  /** The agent, or a non-retryable failure that names the agents this worker knows. */
  get(name: string): AgentDefinition {
    const agent = this.agents.get(name);
    if (agent) return agent;
    const known = this.names();
    throw ApplicationFailure.create({
      type: ErrorTypes.UnknownAgent,
      nonRetryable: true,
      message:
        `Unknown agent "${name}". ` +
        (known.length > 0 ? `This worker knows: ${known.join(', ')}.` : 'This worker has no agents registered.'),
    });
  }
}
