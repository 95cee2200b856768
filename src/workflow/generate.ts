/**
 * generate (third step of a notes question): reranks what this run read to
 * the best few passages and writes the answer from them alone. With a model
 * configured (the host's planner is the model planner: `WARRANT_MODEL`,
 * `OPENAI_BASE_URL`) it makes exactly one model call, offering no tools and
 * showing only those passages as citable evidence; without one the answer is
 * extractive (quoted passages with their note ids). A read that was refused
 * or failed for good ends the run instead (branches.ts), before any model
 * call; no usable passage → abstain, saying what cannot be found.
 */
import { isGraphInterrupt, type LangGraphRunnableConfig } from "@langchain/langgraph";
import { observationsSinceRequest } from "../domains/rules-planner.js";
import { isModelBehaviorError } from "../errors.js";
import type { Host } from "../host.js";
import type { PlanResult, Planner } from "../planners/planner.js";
import { sanitizeOutcome } from "../planners/sanitize.js";
import { costOf } from "../policy/pricing.js";
import type { Evidence } from "../state/evidence.js";
import { threadIdFrom } from "../run-config.js";
import { beginStep, concludeStep, type Step, type StepUpdate } from "../graph/step.js";
import { withoutSecrets } from "../planners/reply-redaction.js";
import type { State } from "../state.js";
import { cannotFind } from "../domains/notes/question.js";
import { failureEnding } from "./branches.js";
import { extractiveAnswer } from "./extractive.js";
import { passageTranscript } from "./model-input.js";
import { RERANK_TOP, rerank, searchScores } from "./rerank.js";
import { notesRequest } from "./request.js";
import { retrievedEvidence } from "./retrieved.js";

/** The one model call: the request and the passages (model-input.ts), no tools, so the reply can only be an answer. */
async function modelAnswer(
  host: Host,
  state: State,
  step: Step,
  planner: Planner,
  passages: Evidence[],
  config: LangGraphRunnableConfig,
): Promise<StepUpdate> {
  const signal = config.signal;
  const threadId = threadIdFrom(config);
  let result: PlanResult;
  try {
    result = await planner.plan({
      request: step.request,
      messages: passageTranscript(step.request, state.messages, passages),
      tools: [],
      evidence: passages,
      turn: step.run.turn,
      ...(signal ? { signal } : {}),
    });
  } catch (error) {
    if (isGraphInterrupt(error)) throw error;
    if (!isModelBehaviorError(error)) throw error;
    return concludeStep(state, step, { type: "error", code: error.code, message: error.message }, { model_calls: 1 });
  }
  const usage = {
    model_calls: 1,
    input_tokens: result.usage.input_tokens,
    output_tokens: result.usage.output_tokens,
    cost_usd: costOf(result.usage, planner.price),
  };
  // Model output is untrusted text: nothing unstorable, and no secret, reaches the checkpoint.
  const outcome = await withoutSecrets(sanitizeOutcome(result.outcome), {
    host,
    tools: await host.tools(),
    threadId,
    run: step.run,
  });
  if (outcome.type === "tool_calls") {
    return concludeStep(
      state,
      step,
      {
        type: "error",
        code: "model_unexpected_calls",
        message: `the generate step offers no tools; the model proposed ${outcome.calls.length} call(s)`,
      },
      usage,
    );
  }
  return concludeStep(state, step, outcome, usage);
}

export function makeGenerateNode(host: Host) {
  return async function generate(state: State, config: LangGraphRunnableConfig): Promise<StepUpdate> {
    const step = await beginStep(host, state, config);
    const reads = observationsSinceRequest(state.messages).filter((observation) => observation.tool === "read_note");
    const ending = failureEnding(reads);
    if (ending) return concludeStep(state, step, ending);
    const request = notesRequest(step.request);
    const passages = rerank(
      retrievedEvidence(state.messages, state.evidence),
      request,
      RERANK_TOP,
      searchScores(state.messages),
    );
    if (passages.length === 0) return concludeStep(state, step, cannotFind(request));
    const planner = await host.planner();
    // Only the model planner is a model; the rules planner and test doubles of a planner's policy get the extractive answer.
    if (planner.kind !== "model") return concludeStep(state, step, extractiveAnswer(passages));
    return modelAnswer(host, state, step, planner, passages, config);
  };
}
