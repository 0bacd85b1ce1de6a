/**
 * The `keel` command line: its commands, options and help. The commands' code is imported
 * when a command runs, so `keel --help` loads neither Temporal's client nor its worker.
 */
import { Command, InvalidArgumentError, Option } from 'commander';
import { readFileSync } from 'node:fs';
import { PERMISSION_MODES, type PermissionMode } from '../../core/permissions/index.js';
import { CHAT_HELP } from './chat-help.js';
import { CliError, DEFAULT_TASK_QUEUE, type GlobalOptions } from './common.js';

const RUN_STATUSES = [
  'running',
  'awaiting_approval',
  'sleeping',
  'paused',
  'completed',
  'max_turns',
  'max_tokens',
  'max_cost',
  'wallclock',
  'retry_aborted',
  'blocked',
  'failed',
  'cancelled',
];

function nonNegativeNumber(value: string): number {
  const n = Number(value);
  if (!Number.isFinite(n) || n < 0) throw new InvalidArgumentError('expected a number, 0 or more.');
  return n;
}

function wholeNumber(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw new InvalidArgumentError('expected a whole number, 0 or more.');
  return n;
}

function positiveInt(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError('expected a whole number of at least 1.');
  return n;
}

function permissionMode(value: string): PermissionMode {
  if (!(PERMISSION_MODES as readonly string[]).includes(value)) {
    throw new InvalidArgumentError(`expected one of ${PERMISSION_MODES.join(', ')}.`);
  }
  return value as PermissionMode;
}

function examples(...lines: string[]): string {
  return `\nExamples:\n${lines.map((l) => `  $ ${l}`).join('\n')}\n`;
}

const taskQueueOption = () =>
  new Option('--task-queue <queue>', 'Temporal task queue of the workers').default(DEFAULT_TASK_QUEUE).env('KEEL_TASK_QUEUE');

/**
 * keel's own version, from its package.json (npm_package_version would be the user's project's):
 * the package root is three levels above src/client/cli/, four above dist/src/client/cli/.
 */
function keelVersion(): string {
  const root = import.meta.url.endsWith('.ts') ? '../../../' : '../../../../';
  const pkg = JSON.parse(readFileSync(new URL(`${root}package.json`, import.meta.url), 'utf8')) as { version: string };
  return pkg.version;
}

/** Builds the program; `setExitCode` receives each command's exit code. */
export function buildProgram(setExitCode: (code: number) => void): Command {
  const program = new Command('keel');
  const commands = () => import('./commands.js');
  const globals = (command: Command) => command.optsWithGlobals<GlobalOptions>();

  program
    .description('Durable LLM agents on Temporal: every run a workflow, every model turn and tool call an activity.')
    .version(keelVersion(), '-V, --version')
    .option('--address <host:port>', 'Temporal server (default: TEMPORAL_ADDRESS, the profile, or localhost:7233)')
    .option('--namespace <namespace>', 'Temporal namespace (default: TEMPORAL_NAMESPACE, the profile, or "default")')
    .option('--profile <name>', 'profile of the Temporal config file (default: TEMPORAL_PROFILE, or "default")')
    .option('--ui-url <url>', 'base URL of the Temporal Web UI, for links (default: KEEL_UI_URL, or the dev server\'s)')
    .showHelpAfterError('(add --help for usage)')
    .addHelpText(
      'after',
      examples(
        'keel demo                                  # run the demo agent with an in-process worker',
        'keel worker                                # serve the examples\' agents',
        'keel run demo "Weather in Lisbon and Tokyo?"',
        'keel list --agent demo',
        'keel tree demo-1a2b3c4d                    # the run, its handoffs, sub-agents and background agents',
        'keel pending                               # calls waiting for approval, with the commands to decide them',
        'keel approve demo-1a2b3c4d demo_postcard',
        'TEMPORAL_ADDRESS=127.0.0.1:7233 keel status demo-1a2b3c4d',
      ) + '\nStart a local Temporal dev server first with ./temporal-dev.sh start (npm start does).\n',
    );

  program
    .command('worker')
    .description('Run a worker that serves agents; Ctrl-C (SIGINT) or SIGTERM shuts it down cleanly.')
    .option('--agents <module>', "module (relative to the current directory; TypeScript through your loader, such as tsx) exporting the agents as `agents` or as its default export (default: the examples' agents)")
    .addOption(taskQueueOption())
    .addHelpText(
      'after',
      examples(
        'keel worker',
        'keel worker --agents ./agents.js --task-queue support',
        'node --import tsx node_modules/.bin/keel worker --agents ./agents.ts   # TypeScript agents',
      ),
    )
    .action(async (options: { agents?: string; taskQueue?: string }, command: Command) => {
      setExitCode(await (await commands()).workerCommand(options, globals(command)));
    });

  program
    .command('run')
    .description('Start a run of an agent and follow it live: turns, tool calls, results, the answer.')
    .argument('<agent>', 'name of the agent (a worker must serve it)')
    .argument('<prompt>', 'the prompt')
    .option('--id <workflowId>', 'workflow ID of the run (default: <agent>-<random>)')
    .option('--detach', 'print the workflow ID and UI link and return without following the run')
    .option('--json', 'print the events as JSON lines, then the result (or the error) as JSON; never asks')
    .option('--no-input', 'never ask about approvals: print the commands that decide a waiting call, and keep following')
    .option('--tools <module>', "run the agent's client tools (runsOn: 'client') here, with the handlers this module exports")
    .option('--state <json>', "the run's state at its start, a JSON object: its tools read and write it, it fills {key} in instructions")
    .option('--no-stream', 'do not stream the run: follow its events by query, and print the answer at the end')
    .addOption(taskQueueOption())
    .addHelpText(
      'after',
      examples(
        'keel run demo "What\'s the weather in Lisbon and Tokyo?"',
        'keel run assistant "Summarize notes.txt" --tools ./client-tools.js   # export async function read_file({ path }) {...}',
        'keel run advisor "Pick a plan." --state \'{"user": "Ada"}\'',
        'keel run demo "Weather in Paris?" --id paris-1 --detach',
        'keel run demo "Weather in Paris?" --no-input     # decide from elsewhere: keel approve / keel deny',
        'keel run demo "Weather in Paris?" --json | jq -c \'select(.type == "result")\'',
      ) +
        '\nApprovals: in a terminal, a call that needs approval is asked about inline: [a]llow, [d]eny (with a reason\n' +
        'the model reads), [e]dit the arguments (a JSON object), allow [A]lways (for the rest of the run). Without a\n' +
        'terminal, or with --no-input or --json, the commands that decide it are printed and the run is followed on.\n' +
        '\nExit code: 0 when the run completes (or stops at its turn limit), 1 when it fails or is cancelled,\n' +
        '3 when a guardrail blocks it, 130 when you stop following (Ctrl-C; the run goes on).\n',
    )
    .action(async (agent: string, prompt: string, options, command: Command) => {
      setExitCode(await (await commands()).runCommand(agent, prompt, options, globals(command)));
    });

  program
    .command('chat')
    .description('Talk to an agent in a session: the answer as it arrives, tool calls in a line each, approvals asked inline.')
    .argument('[agent]', 'name of the agent (a worker must serve it); not needed with --session')
    .option('--session <id>', 'go on with this session (its last messages are shown first)')
    .option('--tools <module>', "run the agent's client tools (runsOn: 'client') here, with the handlers this module exports")
    .addOption(taskQueueOption())
    .addHelpText(
      'after',
      examples('keel chat demo', 'keel chat --session demo-session-1a2b3c4d', 'keel chat assistant --tools ./client-tools.js', 'printf "Weather in Lisbon?\\nAnd Tokyo?\\n" | keel chat demo') +
        '\nCommands in the chat:\n' +
        CHAT_HELP.map((line) => `  ${line}`).join('\n') +
        '\n\nCtrl-C during an answer stops that run (the session goes on); on an empty prompt it leaves.\n' +
        'Without a terminal, each line is a message and the answers are printed; a run that waits for approval ends\n' +
        'the chat with exit code 1 and the commands that decide it.\n',
    )
    .action(async (agent: string | undefined, options: { session?: string; tools?: string; taskQueue?: string }, command: Command) => {
      if (!agent && !options.session) throw new CliError('Name the agent to talk to, or a session to go on with: keel chat <agent> · keel chat --session <id>');
      setExitCode(await (await import('./chat.js')).chatCommand(agent ?? '', options, globals(command)));
    });

  program
    .command('status')
    .description(
      "Show a run's status: agent, status, turns and usage (when a worker answers), start and close time; the calls " +
        'waiting for approval, the permission mode and the rules approvals remembered, when there are.',
    )
    .argument('<workflowId>', 'workflow ID of the run')
    .option('--json', 'print it as JSON')
    .addHelpText('after', examples('keel status demo-1a2b3c4d'))
    .action(async (workflowId: string, options, command: Command) => {
      setExitCode(await (await commands()).statusCommand(workflowId, options, globals(command)));
    });

  program
    .command('state')
    .description("Print a run's state as JSON: what its tools, hooks and middleware have written (and what it started with).")
    .argument('<workflowId>', 'workflow ID of the run (or monitor)')
    .addHelpText('after', examples('keel state demo-1a2b3c4d'))
    .action(async (workflowId: string, _options, command: Command) => {
      setExitCode(await (await commands()).stateCommand(workflowId, globals(command)));
    });

  program
    .command('show')
    .description("Show a run's transcript: user, assistant and tool messages, with the tool calls.")
    .argument('<workflowId>', 'workflow ID of the run')
    .option('--json', 'print the messages as JSON')
    .addHelpText('after', examples('keel show demo-1a2b3c4d'))
    .action(async (workflowId: string, options, command: Command) => {
      setExitCode(await (await commands()).showCommand(workflowId, options, globals(command)));
    });

  program
    .command('tree')
    .description(
      'Show a run and everything under it: which agents were in charge (its handoffs), its sub-agents and background ' +
        'agents (child workflows), recursively, each with its kind, status and workflow ID.',
    )
    .argument('<workflowId>', 'workflow ID of the run')
    .option('--json', 'print the tree as nested JSON: { workflowId, agent, kind, status, callId?, name?, handoffs, children: [...] }')
    .addHelpText(
      'after',
      examples('keel tree lead-1a2b3c4d', "keel tree lead-1a2b3c4d --json | jq '.children[] | {workflowId, status}'") +
        '\nKinds: run and monitor (started by a client), sub-agent (a tool call that ran an agent; its call ID is shown),\n' +
        'background (a monitor a run spawned; its name is shown). Handoffs come from the run\'s events, which a worker\n' +
        'answers; children come from the events and from Temporal visibility, statuses from Temporal itself.\n',
    )
    .action(async (workflowId: string, options, command: Command) => {
      setExitCode(await (await commands()).treeCommand(workflowId, options, globals(command)));
    });

  program
    .command('list')
    .description('List recent runs, newest first (from Temporal visibility).')
    .option('--limit <n>', 'how many runs at most', positiveInt, 20)
    .option('--agent <name>', 'only runs of this agent')
    .addOption(new Option('--status <status>', 'only runs with this status').choices(RUN_STATUSES))
    .option('--json', 'print the runs as JSON')
    .addHelpText('after', examples('keel list', 'keel list --agent demo --status failed --limit 5'))
    .action(async (options, command: Command) => {
      setExitCode(await (await commands()).listCommand(options, globals(command)));
    });

  // keel pending / approve / deny / mode: human approval of tool calls. Their code: approval-commands.ts.
  const approvalCommands = () => import('./approval-commands.js');
  program
    .command('pending')
    .description(
      'List the runs waiting for approval and their calls: tool, arguments, who asked and why, since when, and the commands that decide them.',
    )
    .option('--agent <name>', 'only runs of this agent')
    .option('--limit <n>', 'how many runs at most', positiveInt, 100)
    .option('--json', 'print them as JSON: [{ workflowId, runId, agent, startTime, calls: [{ callId, tool, arguments, stage, reason, since, expires?, turn }] }]')
    .addHelpText(
      'after',
      examples('keel pending', 'keel pending --agent demo', 'keel pending --json | jq -r \'.[] | .workflowId + " " + .calls[].callId\'') +
        '\nA run waiting for approval has the status awaiting_approval (keel list --status awaiting_approval).\n',
    )
    .action(async (options, command: Command) => {
      setExitCode(await (await approvalCommands()).pendingCommand(options, globals(command)));
    });

  program
    .command('approve')
    .description(
      'Allow a call that waits for approval: the one named, every waiting call with --all, or, without either, the only one that waits.',
    )
    .argument('<workflowId>', 'workflow ID of the run')
    .argument('[callId]', 'the call (see keel pending); optional when exactly one waits')
    .option('--all', 'allow every call of the run that waits')
    .option('--edit <json>', 'run the call with these arguments instead: a JSON object, checked against the tool\'s schema')
    .option('--remember', 'allow calls like this one for the rest of the run, without asking')
    .option('--reason <text>', 'why (recorded with the decision)')
    .option('--signal', 'send the decision as a plain Signal (fire and forget) instead of an Update that waits for the run to take it')
    .addHelpText(
      'after',
      examples(
        'keel approve demo-1a2b3c4d                      # the only call that waits',
        'keel approve demo-1a2b3c4d demo_postcard',
        'keel approve demo-1a2b3c4d --all --remember',
        'keel approve demo-1a2b3c4d demo_postcard --edit \'{"message": "Greetings from Lisbon!"}\'',
        'keel approve demo-1a2b3c4d demo_postcard --signal',
      ) +
        '\nBy default the decision is an Update: the run checks it (the call waits, edited arguments match the\n' +
        "tool's schema) and answers; a refused decision prints the run's reason and exits 1. With several calls\n" +
        'waiting and neither a call ID nor --all, the calls are listed and nothing is decided (exit 1).\n',
    )
    .action(async (workflowId: string, callId: string | undefined, options, command: Command) => {
      setExitCode(await (await approvalCommands()).decideCommand('allow', workflowId, callId, options, globals(command)));
    });

  program
    .command('deny')
    .description('Deny a call that waits for approval; the model reads the reason as the call\'s result and goes on.')
    .argument('<workflowId>', 'workflow ID of the run')
    .argument('[callId]', 'the call (see keel pending); optional when exactly one waits')
    .option('--all', 'deny every call of the run that waits')
    .option('--reason <text>', 'why: the model reads it (optional, but it helps the model do better)')
    .option('--signal', 'send the decision as a plain Signal (fire and forget) instead of an Update')
    .addHelpText(
      'after',
      examples(
        'keel deny demo-1a2b3c4d demo_postcard --reason "No postcards today."',
        'keel deny demo-1a2b3c4d --all --reason "Not now."',
      ),
    )
    .action(async (workflowId: string, callId: string | undefined, options, command: Command) => {
      setExitCode(await (await approvalCommands()).decideCommand('deny', workflowId, callId, options, globals(command)));
    });

  program
    .command('mode')
    .description("Change a run's permission mode, for the calls it decides from now on.")
    .argument('<workflowId>', 'workflow ID of the run')
    .argument('<mode>', `one of ${PERMISSION_MODES.join(', ')}`, permissionMode)
    .addHelpText(
      'after',
      examples('keel mode demo-1a2b3c4d plan', 'keel mode demo-1a2b3c4d default') +
        '\nModes (as in Claude Code): default asks when a rule or the tool says so; acceptEdits also allows file\n' +
        'edits inside the working directory; plan denies every tool that is not read-only; dontAsk denies what\n' +
        'would ask; bypassPermissions allows all but what a deny or ask rule names.\n',
    )
    .action(async (workflowId: string, mode: PermissionMode, _options, command: Command) => {
      setExitCode(await (await approvalCommands()).modeCommand(workflowId, mode, globals(command)));
    });

  {
    // keel schedule <subcommand>: Temporal Schedules that start runs. Their code: schedule-commands.ts.
    const scheduleCommands = () => import('./schedule-commands.js');
    const schedule = program
      .command('schedule')
      .description('Start runs of an agent on a cron expression or at an interval (Temporal Schedules); each run is an ordinary run.')
      .addHelpText(
        'after',
        examples(
          'keel schedule create lisbon-weather --agent demo --every 1h --prompt "Weather in Lisbon?"',
          'keel schedule list',
          'keel schedule describe lisbon-weather',
          'keel schedule pause lisbon-weather --note "holiday"',
          'keel schedule delete lisbon-weather',
        ),
      );

    schedule
      .command('create')
      .description(
        'Create a schedule that starts a run (or a monitor) of an agent on --cron or --every. Its runs are named ' +
          '<name>-<time>; by default no run starts while the previous one still runs (--overlap skip).',
      )
      .argument('<name>', 'name of the schedule (letters, digits, ".", "_", "-")')
      .requiredOption('--agent <agent>', 'the agent each run runs (a worker on the task queue must serve it)')
      .requiredOption('--prompt <prompt>', "each run's prompt (a monitor's goal)")
      .option('--cron <expression>', 'when, as a cron expression, in UTC unless it begins with CRON_TZ=<zone>: "*/15 * * * *", "0 9 * * MON-FRI", @daily')
      .option('--every <duration>', 'or at an interval: 30s, 15m, 1h, 1d (times fall on multiples of it since the Unix epoch)')
      .option('--monitor', 'start a monitor (agentMonitor) each time instead of a plain run (agentRun)')
      .addOption(
        new Option('--overlap <policy>', 'when a run is due while the last one still runs: skip it, buffer one, start it anyway, cancel or terminate the last one')
          // OVERLAP_POLICIES of schedules.ts, not imported: it loads Temporal's client, which `keel --help` never does.
          .choices(['skip', 'buffer_one', 'allow_all', 'cancel_other', 'terminate_other'])
          .default('skip'),
      )
      .option('--json', 'print the schedule as JSON')
      .addOption(taskQueueOption())
      .addHelpText(
        'after',
        examples(
          'keel schedule create lisbon-weather --agent demo --every 1h --prompt "Weather in Lisbon?"',
          'keel schedule create weekday-report --agent reporter --cron "0 9 * * MON-FRI" --prompt "Summarize yesterday\'s errors"',
          'keel schedule create disk-watch --agent ops --every 1d --monitor --prompt "Keep disk usage under 80%"',
        ) + '\nGive exactly one of --cron and --every. Deleting a schedule leaves the runs it started alone.\n',
      )
      .action(async (name: string, options, command: Command) => {
        setExitCode(await (await scheduleCommands()).createScheduleCommand(name, options, globals(command)));
      });

    schedule
      .command('list')
      .description("List keel's schedules: agent, when, paused or active, the next run.")
      .option('--json', 'print them as JSON')
      .addHelpText('after', examples('keel schedule list', 'keel schedule list --json'))
      .action(async (options, command: Command) => {
        setExitCode(await (await scheduleCommands()).listSchedulesCommand(options, globals(command)));
      });

    schedule
      .command('describe')
      .description('Show a schedule: agent, prompt, when, overlap, paused, the next times, the recent runs with their workflow IDs and status.')
      .argument('<name>', 'name of the schedule')
      .option('--json', 'print it as JSON')
      .addHelpText('after', examples('keel schedule describe lisbon-weather', 'keel schedule describe lisbon-weather --json | jq ".recentActions"'))
      .action(async (name: string, options, command: Command) => {
        setExitCode(await (await scheduleCommands()).describeScheduleCommand(name, options, globals(command)));
      });

    schedule
      .command('pause')
      .description('Pause a schedule: it starts no runs until unpaused (runs already started go on).')
      .argument('<name>', 'name of the schedule')
      .option('--note <text>', 'why, shown by describe and in the Temporal UI')
      .addHelpText('after', examples('keel schedule pause lisbon-weather', 'keel schedule pause lisbon-weather --note "provider outage"'))
      .action(async (name: string, options, command: Command) => {
        setExitCode(await (await scheduleCommands()).pauseScheduleCommand(name, options, globals(command)));
      });

    schedule
      .command('unpause')
      .description('Unpause a schedule: it starts runs again from its next due time (missed times are not made up).')
      .argument('<name>', 'name of the schedule')
      .option('--note <text>', 'a note, shown by describe and in the Temporal UI')
      .addHelpText('after', examples('keel schedule unpause lisbon-weather'))
      .action(async (name: string, options, command: Command) => {
        setExitCode(await (await scheduleCommands()).unpauseScheduleCommand(name, options, globals(command)));
      });

    schedule
      .command('trigger')
      .description("Start a run now, with the schedule's agent and prompt (also when it is paused or a run is running).")
      .argument('<name>', 'name of the schedule')
      .addHelpText('after', examples('keel schedule trigger lisbon-weather'))
      .action(async (name: string, _options, command: Command) => {
        setExitCode(await (await scheduleCommands()).triggerScheduleCommand(name, globals(command)));
      });

    schedule
      .command('delete')
      .description('Delete a schedule. The runs it started are ordinary runs: they go on and stay listed.')
      .argument('<name>', 'name of the schedule')
      .addHelpText('after', examples('keel schedule delete lisbon-weather'))
      .action(async (name: string, _options, command: Command) => {
        setExitCode(await (await scheduleCommands()).deleteScheduleCommand(name, globals(command)));
      });
  }

  program
    .command('demo')
    .description(
      'Run the demo agent end to end: an in-process worker, a run followed live, the answer and its UI link. ' +
        'Offline on the demo model; uses OpenAI or Anthropic when OPENAI_API_KEY / ANTHROPIC_API_KEY / KEEL_MODEL is set.',
    )
    .argument('[prompt]', 'the prompt (default: the weather and local time in Lisbon and Tokyo)')
    .addOption(taskQueueOption())
    .addHelpText(
      'after',
      examples('keel demo', 'keel demo "Is it warmer in Sydney or in Paris?"', 'npm start   # starts the dev server, then keel demo') +
        '\nThe demo agent ends by sending a postcard, a tool that needs approval: in a terminal you are asked\n' +
        '(allow, deny, edit, allow always); without one the demo allows it itself, printing the command a\n' +
        'person would have run (keel approve <run> <call>).\n',
    )
    .action(async (prompt: string | undefined, options, command: Command) => {
      setExitCode(await (await commands()).demoCommand(prompt, options, globals(command)));
    });

  const monitorCommands = () => import('./monitor-commands.js');
  const monitor = program
    .command('monitor')
    .description('Monitors: agents that work toward a goal turn after turn, sleeping durably between turns.');
  monitor
    .command('start')
    .description('Start a monitor: the agent works toward the goal, scheduling its own next turns, within its budgets.')
    .argument('<agent>', 'name of the agent (a worker must serve it)')
    .requiredOption('--goal <text>', 'the goal: the first prompt')
    .option('--id <workflowId>', 'workflow ID (default: <agent>-monitor-<random>)')
    .option('--max-turns <n>', 'monitor turns at most (default 50; 0: no limit)', wholeNumber)
    .option('--max-input-tokens <n>', 'input tokens at most', wholeNumber)
    .option('--max-output-tokens <n>', 'output tokens at most', wholeNumber)
    .option('--max-cost <usd>', 'US dollars at most, from --prices', nonNegativeNumber)
    .option('--prices <file>', 'price table JSON: {"openai:gpt-4.1": {"input": 2, "output": 8}} (USD per million tokens)')
    .option('--wallclock <duration>', "how long it may run, such as '2h' or '7 days'")
    .option('--turn-timeout <duration>', "one turn's limit, such as '10m'")
    .option('--json', 'print {"workflowId", "uiUrl"} as JSON')
    .addOption(taskQueueOption())
    .addHelpText(
      'after',
      examples(
        'keel monitor start demo --goal "Check the weather in Lisbon every few minutes; report when it rains."',
        'keel monitor start ops --goal "Watch disk usage" --max-turns 0 --wallclock "7 days" --json',
      ),
    )
    .action(async (agent: string, options, command: Command) => {
      setExitCode(await (await monitorCommands()).monitorStartCommand(agent, options, globals(command)));
    });
  const action = (name: 'inject' | 'wake' | 'pause' | 'resume' | 'stop', description: string, message?: string) => {
    const command = program.command(name).description(description).argument('<workflowId>', 'workflow ID of the monitor');
    if (message) command.argument(name === 'inject' ? '<message>' : '[reason]', message);
    command
      .addHelpText('after', examples(name === 'inject' ? 'keel inject ops-monitor-1a2b3c4d "The disk was replaced."' : `keel ${name} ops-monitor-1a2b3c4d`))
      // Commander passes the arguments, then the options, then the command itself.
      .action(async (...args: unknown[]) => {
        const [workflowId, text] = args as [string, unknown];
        const own = args.at(-1) as Command;
        setExitCode(await (await monitorCommands()).monitorActionCommand(name, workflowId, typeof text === 'string' ? text : undefined, globals(own)));
      });
  };
  action('inject', 'Queue a message for a monitor\'s next turn (an [Inbox] block); a sleeping monitor wakes at once.', 'the message');
  action('wake', 'Wake a sleeping monitor now.');
  action('pause', 'Pause a monitor at its next turn boundary; asleep, it stays asleep past its wake time.');
  action('resume', 'Resume a paused monitor.');
  action('stop', 'Stop a monitor: its current turn is cancelled cleanly and it ends cancelled.', 'why (recorded as its result)');

  return program;
}

/** Prints an error the way a person wants to read it: the message, no stack (KEEL_DEBUG=1 for one). */
export function describeError(err: unknown): string {
  const e = err as Error | undefined;
  const name = e?.name ?? '';
  const message = e?.message ?? String(err);
  if (process.env.KEEL_DEBUG && e?.stack) return e.stack;
  if (err instanceof CliError || name === 'ServerUnreachableError' || name === 'RunFailedError') return message;
  if (name === 'WorkflowNotFoundError') return `No such run: ${message}`;
  return `keel: ${message}`;
}

/** Runs the CLI on `argv`; resolves to the exit code. */
export async function main(argv: string[]): Promise<number> {
  let exitCode = 0;
  const program = buildProgram((code) => {
    exitCode = code;
  });
  try {
    await program.parseAsync(argv);
  } catch (err) {
    const { colorEnabled, createStyle } = await import('./format.js');
    process.stderr.write(`${createStyle(colorEnabled(process.stderr)).red(describeError(err))}\n`);
    return 1;
  }
  return exitCode;
}
