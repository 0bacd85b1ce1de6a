/**
 * The boundary schemas (src/core/schemas.ts): what each check says about a bad input, and that
 * a good one passes unchanged. The workflows' own tests (lifecycle, monitor, approvals) show the
 * same messages reaching a caller through Temporal.
 */
import { ApplicationFailure } from '@temporalio/common';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineAgent, defineTool } from '../src/core/define.js';
import { defineGuardrail } from '../src/core/guardrails.js';
import { checkAgentRunInput, checkMonitorInput, parseApprovalDecision, parseInject, parsePermissionMode } from '../src/core/boundary.js';

function failure(fn: () => void): ApplicationFailure {
  try {
    fn();
  } catch (err) {
    return err as ApplicationFailure;
  }
  throw new Error('expected a failure');
}

describe('agentRun input', () => {
  it('passes a good input', () => {
    expect(() => checkAgentRunInput({ agent: 'a', input: 'hi', context: { user: 1 }, overrides: { maxTurns: 3, tools: ['x'] }, options: { continueAsNewAfterEvents: 50 } }, false)).not.toThrow();
  });

  it('names every problem, then what a valid input looks like, as a non-retryable KeelInvalidInput', () => {
    const f = failure(() => checkAgentRunInput({ agent: '', prompt: 'hi', overrides: { maxTurns: 0, permissionMode: 'yolo' }, continued: {} }, false));
    expect(f).toBeInstanceOf(ApplicationFailure);
    expect(f.type).toBe('KeelInvalidInput');
    expect(f.nonRetryable).toBe(true);
    expect(f.message).toBe(
      'Invalid agentRun input: "agent" must be a non-empty string; "input" must be a string (the prompt); overrides.maxTurns must be a whole number of at least 1; ' +
        'overrides.permissionMode must be one of default, acceptEdits, plan, dontAsk, bypassPermissions, got "yolo"; "prompt" is not a field keel knows; remove it; ' +
        '"continued" is set by keel when a run continues as new, never by a caller. Expected {"agent": "<name>", "input": "<prompt>"}.',
    );
    expect(failure(() => checkAgentRunInput(null, false)).message).toMatch(/^Invalid agentRun input: the input must be a JSON object\./);
    expect(failure(() => checkAgentRunInput({ agent: 'a', input: '', context: 'x'.repeat(70_000) }, false)).message).toMatch(/"context" must be at most 64 KB of JSON/);
  });

  it('takes continued from keel itself', () => {
    expect(() => checkAgentRunInput({ agent: 'a', input: '', continued: { agent: 'a' } }, true)).not.toThrow();
  });
});

describe('agentMonitor input', () => {
  it('checks budgets, durations included', () => {
    expect(() => checkMonitorInput({ agent: 'a', goal: 'watch', budgets: { maxTurns: 0, wallclock: '2h', turnTimeout: 30_000 } }, false)).not.toThrow();
    const f = failure(() => checkMonitorInput({ agent: 'a', goal: ' ', budgets: { maxTurns: -1, wallclock: 'soon', turnTimeout: 0 }, options: { turnRetry: [{ action: 'again' }] } }, false));
    expect(f.message).toBe(
      'Invalid agentMonitor input: "goal" must be a non-empty string (the first prompt); budgets.maxTurns must be a number, 0 or more; ' +
        "budgets.wallclock must be a positive duration (milliseconds, or a string such as '2h'); budgets.turnTimeout must be a positive duration (milliseconds, or a string such as '10m'); " +
        'options.turnRetry[0].action must be "retry", "skip" or "abort". Expected {"agent": "<name>", "goal": "<first prompt>", "budgets"?: {...}}.',
    );
  });
});

describe('approval decisions', () => {
  it('keeps what was given, and remember only when true', () => {
    expect(parseApprovalDecision({ callId: 'c', decision: 'allow', arguments: { a: 1 }, remember: true })).toEqual({ ok: true, decision: { callId: 'c', decision: 'allow', arguments: { a: 1 }, remember: true } });
    expect(parseApprovalDecision({ callId: 'c', decision: 'deny', reason: 'no', remember: false })).toEqual({ ok: true, decision: { callId: 'c', decision: 'deny', reason: 'no' } });
  });

  it('says what is wrong and what a decision looks like', () => {
    const error = (v: unknown) => (parseApprovalDecision(v) as { error: string }).error;
    expect(error('allow')).toBe('Invalid approval decision: it must be a JSON object. Expected {"callId": "<id>", "decision": "allow" | "deny", "reason"?: "...", "arguments"?: {...}, "remember"?: true}.');
    expect(error({ callId: 'c', decision: 'yes' })).toMatch(/^Invalid approval decision: "decision" must be "allow" or "deny", got "yes"\./);
    expect(error({ callId: '', decision: 'allow', args: {} })).toMatch(/"callId" must be the ID of a pending call; "args" is not a field of a decision\./);
    expect(error({ callId: 'c', decision: 'deny', arguments: {}, remember: true })).toMatch(/"arguments" can only be edited when the decision is "allow"; "remember" only applies to "allow"/);
    expect(error({ callId: 'c', decision: 'allow', arguments: [1] })).toMatch(/"arguments" must be a JSON object \(the edited arguments of the call\)/);
  });
});

describe('signals', () => {
  it('inject takes a string or { message }', () => {
    expect(parseInject('hi')).toEqual({ ok: true, message: 'hi' });
    expect(parseInject({ message: 'hi' })).toEqual({ ok: true, message: 'hi' });
    for (const bad of ['', '  ', { message: '' }, { text: 'hi' }, 3, null]) expect(parseInject(bad)).toMatchObject({ ok: false });
  });

  it('a permission mode is one of the modes', () => {
    expect(parsePermissionMode('plan')).toEqual({ ok: true, mode: 'plan' });
    expect(parsePermissionMode('yolo')).toEqual({ ok: false, error: 'Unknown permission mode "yolo": use one of default, acceptEdits, plan, dontAsk, bypassPermissions.' });
  });
});

describe('guardrail kinds', () => {
  const noSecrets = defineGuardrail({ name: 'no-secrets', check: () => ({ tripped: false }) });
  const tool = (guardrails: object) => defineTool({ name: 'echo', description: 'Echo.', input: z.object({ text: z.string() }), guardrails, execute: ({ text }) => text });

  it('are named on a tool as on an agent, the old names kept as aliases', () => {
    const named = tool({ toolInput: [noSecrets], toolOutput: [noSecrets] });
    expect(named.spec.guardrails).toEqual({ toolInput: ['no-secrets'], toolOutput: ['no-secrets'] });
    expect(tool({ input: [noSecrets], output: [noSecrets] }).spec.guardrails).toEqual(named.spec.guardrails);
    const agent = defineAgent({ name: 'a', instructions: 'x', model: 'openai:x', tools: [named], guardrails: { toolInput: [noSecrets] } });
    expect([...agent.guardrails.keys()]).toEqual(['no-secrets']);
  });

  it('refuses a kind a tool does not have, or one kind under both names', () => {
    expect(() => tool({ inputs: [noSecrets] })).toThrow('tool "echo": guardrails has no kind "inputs"; a tool\'s kinds are toolInput and toolOutput.');
    expect(() => tool({ input: [noSecrets], toolInput: [noSecrets] })).toThrow(/guardrails.input is the old name of guardrails.toolInput/);
  });
});
