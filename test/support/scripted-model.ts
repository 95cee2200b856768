/**
 * The scripted model for tests that run the real server with the model
 * planner: the fake OpenAI endpoint (test/int/support/fake-openai.ts), the
 * completions tests script on it, and the server started against it. The
 * fake is strict like the scripted planner: a request with nothing scripted
 * fails, and `fake.pending()` says how many scripted answers were not used.
 */
import { startFakeOpenAI, type FakeOpenAI, type ScriptedCompletion } from "../int/support/fake-openai.js";
import { createServerSandbox, type ServerProcess, type ServerSandbox } from "../int/support/server-process.js";
import type { Sandbox } from "./sandbox.js";

/** The token usage a scripted completion reports unless a test says otherwise. */
export const SCRIPTED_USAGE = { prompt_tokens: 50, completion_tokens: 20 };

/** The model's final answer: no citations, not abstained. */
export const finalReply = (answer: string, usage = SCRIPTED_USAGE): ScriptedCompletion => ({
  kind: "completion",
  content: JSON.stringify({ answer, citations: [], abstained: false }),
  finish_reason: "stop",
  usage,
});

/** The environment that selects the model planner on `fake`. */
export const modelEnv = (fake: FakeOpenAI) => ({
  WARRANT_PLANNER: "model",
  WARRANT_MODEL: "fake-model",
  OPENAI_BASE_URL: fake.baseUrl,
});

/** A fake OpenAI endpoint, closed at the sandbox's teardown. */
export async function startScriptedModel(sandbox: Sandbox): Promise<FakeOpenAI> {
  return sandbox.add(await startFakeOpenAI());
}

/**
 * A fake model, a server sandbox (database, data directory) and one server
 * on it with the model planner pointed at the fake, plus `env`; all torn down
 * by `sandbox`, the server sandbox before the fake.
 */
export async function startModelServer(
  sandbox: Sandbox,
  env: Record<string, string> = {},
): Promise<{ fake: FakeOpenAI; servers: ServerSandbox; server: ServerProcess }> {
  const fake = await startScriptedModel(sandbox);
  const servers = sandbox.add(await createServerSandbox());
  const server = await servers.start({ ...modelEnv(fake), ...env });
  return { fake, servers, server };
}
