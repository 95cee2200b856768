/**
 * A run's trace exported as OpenTelemetry spans (OTLP/HTTP through the
 * OpenTelemetry JS SDK): one run span, a span per node, and inside them a
 * span per model call and per tool call, with the GenAI semantic-convention
 * attributes (operation, model, tokens, tool name and call id).
 *
 * The spans are built from the trace read out of Postgres, not from live
 * hooks, so what an OTLP backend shows is exactly what `npm run trace`
 * prints: the same run id, the same times, the same (already redacted)
 * arguments. The trace id is derived from the run id, so a run's spans can be
 * found from any of the ids Warrant shows.
 */
import { randomBytes } from "node:crypto";
import {
  context,
  SpanKind,
  SpanStatusCode,
  trace as traceApi,
  type Attributes,
  type Span,
  type Tracer,
} from "@opentelemetry/api";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { BatchSpanProcessor, TracerProvider, type IdGenerator, type SpanExporter } from "@opentelemetry/sdk-trace";
import { ATTR_SERVICE_NAME } from "@opentelemetry/semantic-conventions";
import { callSpanIdOf, traceIdOf } from "../trace-ids.js";
import { CONTROL_NODES } from "./run-trace.js";
import type { ExecutionEntry, PlanEntry, RunTrace } from "./trace-entries.js";

/** GenAI semantic-convention attribute names (incubating in the conventions package, so spelled here once). */
const GEN_AI = {
  operation: "gen_ai.operation.name",
  agentName: "gen_ai.agent.name",
  requestModel: "gen_ai.request.model",
  inputTokens: "gen_ai.usage.input_tokens",
  outputTokens: "gen_ai.usage.output_tokens",
  toolName: "gen_ai.tool.name",
  toolCallId: "gen_ai.tool.call.id",
  toolType: "gen_ai.tool.type",
  toolArguments: "gen_ai.tool.call.arguments",
  conversationId: "gen_ai.conversation.id",
} as const;

/** The run's trace id for every span; span ids random, except a tool call attempt's (`src/trace-ids.ts`), set just before it starts. */
class RunIds implements IdGenerator {
  /** The id the next span takes (a tool call attempt's), then random again. */
  next: string | undefined;
  constructor(private readonly traceId: string) {}
  generateTraceId(): string {
    return this.traceId;
  }
  generateSpanId(): string {
    const id = this.next ?? randomBytes(8).toString("hex");
    this.next = undefined;
    return id;
  }
}

const time = (at: string | null | undefined, fallback: number): number => {
  const parsed = at ? Date.parse(at) : Number.NaN;
  return Number.isFinite(parsed) ? parsed : fallback;
};

interface Interval {
  start: number;
  end: number;
}

function within(span: Interval, at: number): boolean {
  return at >= span.start && at <= span.end;
}

function child(
  tracer: Tracer,
  parent: Span,
  name: string,
  interval: Interval,
  attributes: Attributes,
  kind = SpanKind.INTERNAL,
): Span {
  const span = tracer.startSpan(
    name,
    { startTime: interval.start, attributes, kind },
    traceApi.setSpan(context.active(), parent),
  );
  return span;
}

function modelSpan(tracer: Tracer, parent: Span, plan: PlanEntry, interval: Interval, conversation: string): void {
  const model = plan.model ?? "rules";
  const span = child(
    tracer,
    parent,
    `chat ${model}`,
    interval,
    {
      [GEN_AI.operation]: "chat",
      [GEN_AI.requestModel]: model,
      [GEN_AI.inputTokens]: plan.usage.input_tokens,
      [GEN_AI.outputTokens]: plan.usage.output_tokens,
      [GEN_AI.conversationId]: conversation,
      "warrant.turn": plan.turn,
      "warrant.cost_usd": plan.usage.cost_usd,
      "warrant.tools.offered": plan.offered,
      "warrant.tools.withheld": plan.withheld.map((item) => `${item.tool}:${item.reason}`),
      "warrant.verdict": plan.verdict,
    },
    SpanKind.CLIENT,
  );
  span.end(interval.end);
}

function toolSpan(
  tracer: Tracer,
  ids: RunIds,
  parent: Span,
  entry: ExecutionEntry,
  args: string | undefined,
  conversation: string,
): void {
  const start = time(entry.at, 0);
  // The id the host's traceparent named for this attempt: the MCP server's own spans nest under this one.
  ids.next = callSpanIdOf(entry.call_id, entry.attempt);
  const span = child(
    tracer,
    parent,
    `execute_tool ${entry.tool}`,
    { start, end: time(entry.ended_at, start) },
    {
      [GEN_AI.operation]: "execute_tool",
      [GEN_AI.toolName]: entry.tool,
      [GEN_AI.toolCallId]: entry.call_id,
      [GEN_AI.toolType]: "function",
      [GEN_AI.conversationId]: conversation,
      ...(args === undefined ? {} : { [GEN_AI.toolArguments]: args }),
      "warrant.attempt": entry.attempt,
      "warrant.status": entry.status,
      "warrant.server": entry.server,
      "warrant.risk": entry.risk,
      ...(entry.error_code ? { "error.type": entry.error_code } : {}),
      ...(entry.approved_by ? { "warrant.approved_by": entry.approved_by } : {}),
      ...(entry.task_id ? { "warrant.task_id": entry.task_id } : {}),
    },
  );
  if (entry.status !== "succeeded")
    span.setStatus({ code: SpanStatusCode.ERROR, message: entry.error_code ?? entry.status });
  span.end(time(entry.ended_at, start));
}

/** Most metadata keys put on a run span (the metadata is bounded at 16 KiB anyway). */
const MAX_METADATA_ATTRIBUTES = 64;

/**
 * The client's labels as run-span attributes, in the names LangSmith's
 * OpenTelemetry export gives LangGraph's tags, run name and metadata:
 * `langsmith.span.tags` (the tags), `langsmith.trace.name` (`config.run_name`),
 * `langsmith.metadata.<key>` (a string, number or boolean as it is, anything else as JSON).
 */
export function labelAttributes(labels: RunTrace["labels"]): Attributes {
  if (!labels) return {};
  const attributes: Attributes = {};
  if (labels.tags.length > 0) attributes["langsmith.span.tags"] = labels.tags;
  if (labels.run_name !== null) attributes["langsmith.trace.name"] = labels.run_name;
  for (const [key, value] of Object.entries(labels.metadata).slice(0, MAX_METADATA_ATTRIBUTES)) {
    const plain = typeof value === "string" || typeof value === "number" || typeof value === "boolean";
    attributes[`langsmith.metadata.${key}`] = plain ? value : JSON.stringify(value);
  }
  return attributes;
}

/** Writes the run's spans through `exporter` and flushes them. */
export async function exportTraceSpans(trace: RunTrace, exporter: SpanExporter): Promise<void> {
  const ids = new RunIds(traceIdOf(trace.run_id));
  const provider = new TracerProvider({
    resource: resourceFromAttributes({ [ATTR_SERVICE_NAME]: "warrant" }),
    idGenerator: ids,
    spanProcessors: [new BatchSpanProcessor({ exporter })],
  });
  try {
    const tracer = provider.getTracer("warrant");
    const start = time(trace.started_at, Date.now());
    const lastNode = trace.nodes.at(-1);
    const end = time(trace.ended_at ?? lastNode?.ended_at ?? lastNode?.started_at, start);
    const root = tracer.startSpan(`invoke_agent ${trace.graph_id ?? "agent"}`, {
      startTime: start,
      kind: SpanKind.INTERNAL,
      attributes: {
        [GEN_AI.operation]: "invoke_agent",
        [GEN_AI.agentName]: trace.graph_id ?? "agent",
        [GEN_AI.conversationId]: trace.thread_id,
        [GEN_AI.inputTokens]: trace.usage.input_tokens,
        [GEN_AI.outputTokens]: trace.usage.output_tokens,
        "warrant.run_id": trace.run_id,
        "warrant.thread_id": trace.thread_id,
        "warrant.owner": trace.owner,
        "warrant.termination_reason": trace.termination?.code ?? "running",
        "warrant.usage.model_calls": trace.usage.model_calls,
        "warrant.usage.tool_calls": trace.usage.tool_calls,
        "warrant.usage.cost_usd": trace.usage.cost_usd,
        ...labelAttributes(trace.labels),
      },
    });
    const plans = trace.timeline.filter((entry): entry is PlanEntry => entry.kind === "plan");
    const executions = trace.timeline.filter((entry): entry is ExecutionEntry => entry.kind === "execution");
    const argumentsOf = new Map<string, string>();
    for (const entry of trace.timeline)
      if (entry.kind === "decision" && entry.arguments) argumentsOf.set(entry.call_id, JSON.stringify(entry.arguments));
    const placed = new Set<ExecutionEntry>();
    for (const node of trace.nodes) {
      const interval = { start: time(node.started_at, start), end: time(node.ended_at ?? node.started_at, start) };
      const span = child(tracer, root, node.node, interval, {
        "warrant.node": node.node,
        ...(node.ended_at ? {} : { "warrant.node.open": true }),
      });
      if (!CONTROL_NODES.has(node.node)) {
        const plan = plans.find((entry) => entry.at === node.started_at && entry.node === node.node);
        if (plan && plan.usage.model_calls > 0) modelSpan(tracer, span, plan, interval, trace.thread_id);
      }
      if (node.node === "execute") {
        for (const entry of executions) {
          if (placed.has(entry) || !within(interval, time(entry.at, Number.NaN))) continue;
          placed.add(entry);
          toolSpan(tracer, ids, span, entry, argumentsOf.get(entry.call_id), trace.thread_id);
        }
      }
      span.end(interval.end);
    }
    // Attempts outside any recorded execute step (a reconciliation from the API, a crash's leftovers) hang off the run.
    for (const entry of executions)
      if (!placed.has(entry)) toolSpan(tracer, ids, root, entry, argumentsOf.get(entry.call_id), trace.thread_id);
    if (trace.termination && trace.termination.code !== "final_answer")
      root.setAttribute("warrant.termination_detail", trace.termination.detail);
    root.end(end);
    await provider.forceFlush();
  } finally {
    await provider.shutdown();
  }
}

/** The OTLP/HTTP exporter for `OTEL_EXPORTER_OTLP_ENDPOINT` (the SDK reads the endpoint and headers from the environment), or for `url`. */
export function otlpExporter(url?: string): SpanExporter {
  return new OTLPTraceExporter(url ? { url } : {});
}

/** Whether runs are exported: `OTEL_EXPORTER_OTLP_ENDPOINT` (or the traces-specific one) is set. */
export function otlpConfigured(env: NodeJS.ProcessEnv = process.env): boolean {
  return Boolean(env["OTEL_EXPORTER_OTLP_ENDPOINT"]?.trim() || env["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"]?.trim());
}
