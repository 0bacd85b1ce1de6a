/**
 * The demo agent `npm start` runs: a travel helper that looks up weather and local time
 * with two read-only tools, which the agent calls in parallel, then sends a postcard with
 * what it found: a tool that needs approval, so every demo run shows one (`keel demo` asks
 * in a terminal; `keel pending`, `keel approve`, `keel deny` decide from anywhere).
 *
 * It runs offline on the deterministic `demo` model. With OPENAI_API_KEY or ANTHROPIC_API_KEY
 * in the environment it uses that provider instead, and KEEL_MODEL picks any model.
 */
import { z } from 'zod';
import { defineAgent, defineTool } from '../src/index.js';

/** A fixed table, so the demo's answers are the same on every machine. */
const CLIMATE: Record<string, { tempC: number; sky: string; utcOffset: number }> = {
  amsterdam: { tempC: 9, sky: 'drizzle', utcOffset: 1 },
  berlin: { tempC: 6, sky: 'overcast', utcOffset: 1 },
  lisbon: { tempC: 17, sky: 'sunny', utcOffset: 0 },
  london: { tempC: 8, sky: 'light rain', utcOffset: 0 },
  'new york': { tempC: 4, sky: 'clear', utcOffset: -5 },
  paris: { tempC: 10, sky: 'cloudy', utcOffset: 1 },
  'san francisco': { tempC: 14, sky: 'fog', utcOffset: -8 },
  sydney: { tempC: 24, sky: 'sunny', utcOffset: 11 },
  tokyo: { tempC: 12, sky: 'clear', utcOffset: 9 },
};

function lookup(city: string) {
  const found = CLIMATE[city.trim().toLowerCase()];
  if (!found) {
    throw new Error(`no data for "${city}"; known cities: ${Object.keys(CLIMATE).join(', ')}`);
  }
  return found;
}

export const getWeather = defineTool({
  name: 'get_weather',
  description: 'Current weather for a city: temperature in °C and the sky.',
  input: z.object({ city: z.string().min(1).describe('City name, for example "Lisbon"') }),
  readOnly: true,
  execute: ({ city }) => {
    const { tempC, sky } = lookup(city);
    return `${tempC} °C, ${sky}`;
  },
});

export const getLocalTime = defineTool({
  name: 'get_local_time',
  description: 'The current local time in a city (24-hour clock).',
  input: z.object({ city: z.string().min(1).describe('City name, for example "Tokyo"') }),
  readOnly: true,
  execute: ({ city }) => {
    const { utcOffset } = lookup(city);
    const local = new Date(Date.now() + utcOffset * 3_600_000);
    return `${local.toISOString().slice(11, 16)} (UTC${utcOffset < 0 ? '−' : '+'}${Math.abs(utcOffset)})`;
  },
});

/** Not read-only, and a person approves it first: the run waits (durably) for the decision. */
export const sendPostcard = defineTool({
  name: 'send_postcard',
  description: 'Send the traveller a postcard with a short message. A person approves each postcard first.',
  input: z.object({ message: z.string().min(1).describe('What the postcard says, in a line or two') }),
  requiresApproval: true,
  // A demo: it mails nothing, it says what it would have sent.
  execute: ({ message }) => `Postcard sent: “${message}”`,
});

export function demoModel(env: NodeJS.ProcessEnv = process.env): string {
  if (env.KEEL_MODEL) return env.KEEL_MODEL;
  if (env.OPENAI_API_KEY) return 'openai:gpt-4.1-mini';
  if (env.ANTHROPIC_API_KEY) return 'anthropic:claude-sonnet-4-5';
  return 'demo:travel';
}

export const demo = defineAgent({
  name: 'demo',
  description: 'Answers questions about the weather and local time in cities.',
  instructions:
    'You help travellers. Use get_weather and get_local_time to answer questions about cities; ' +
    'call the tools for every city mentioned, then send one postcard (send_postcard) with what you found, ' +
    'then answer in a few short lines.',
  model: demoModel(),
  tools: [getWeather, getLocalTime, sendPostcard],
  maxTurns: 6,
});

export const DEMO_PROMPT = "What's the weather and the local time in Lisbon and Tokyo?";

export const agents = [demo];
export default agents;
