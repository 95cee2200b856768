/**
 * Turns what LangGraph streams into the SSE events the SDK expects, and
 * emits each one twice: into the in-memory log first (the executing
 * process's readers get it at once) and then to the table behind it (the
 * other instances, reconnects, replay).
 */
import type { EventLog } from "../events.js";
import type { RunEventWriter } from "./event-writer.js";
import type { ClientStreamMode } from "./types.js";
import { ValuesEncoder } from "./values-encoder.js";

/** The library's stream modes. */
export type LibraryStreamMode =
  | "values"
  | "updates"
  | "messages"
  | "custom"
  | "tasks"
  | "checkpoints"
  | "tools"
  | "debug";

export class RunEmitter {
  readonly #log: EventLog;
  readonly #writer: RunEventWriter;
  readonly #modes: ClientStreamMode[];
  readonly #messages = new MessageAccumulator();
  /** The `values` snapshots' JSON and deltas, reusing what did not change since the last one. */
  readonly #values = new ValuesEncoder();
  /** The run's own (client) metadata keys: shown on its events, as LangGraph's server shows them. */
  readonly #clientKeys: ReadonlySet<string>;
  /** How the run's stream ended so far: its last state and whether an interrupt came after it (`ending`). */
  #ending: { values: Record<string, unknown>; interrupted: boolean } | "unknown" | undefined;

  constructor(log: EventLog, writer: RunEventWriter, modes: ClientStreamMode[], clientKeys: Iterable<string> = []) {
    this.#log = log;
    this.#writer = writer;
    this.#modes = modes;
    this.#clientKeys = new Set(clientKeys);
  }

  /** What to ask LangGraph for: `values` always (messages/complete is built from it), `messages` for both message modes. */
  libraryModes(): LibraryStreamMode[] {
    const modes = new Set<LibraryStreamMode>(["values"]);
    for (const mode of this.#modes) {
      if (mode !== "events") modes.add(mode === "messages-tuple" ? "messages" : mode);
    }
    return [...modes];
  }

  /** Whether the client asked for LangChain's `streamEvents` v2 events (`events` mode). */
  wantsEvents(): boolean {
    return this.#modes.includes("events");
  }

  /**
   * One `streamEvents` v2 event: the root graph's `on_chain_stream` carries
   * a chunk of the other modes; every other event is sent as an `events`
   * event, its metadata cut to LangGraph's own keys and the run's client
   * metadata (the run's configurable is the server's; client-view.ts strips the rest).
   */
  streamEvent(event: StreamEventV2): void {
    if (event.event === "on_chain_stream" && (event.parent_ids ?? []).length === 0) {
      const chunk = (event.data as { chunk?: unknown } | undefined)?.chunk;
      if (Array.isArray(chunk) && chunk.length === 2 && typeof chunk[0] === "string") this.chunk(chunk[0], chunk[1]);
      return;
    }
    if ((event.tags ?? []).includes("langsmith:hidden")) return;
    this.push("events", {
      event: event.event,
      name: event.name,
      run_id: event.run_id,
      tags: event.tags ?? [],
      metadata: visibleEventMetadata(event.metadata, this.#clientKeys),
      data: event.data,
      parent_ids: event.parent_ids ?? [],
    });
  }

  /** Emits one event. */
  push(event: string, data: unknown): void {
    if (event === "values") {
      const { json, delta } = this.#values.encode(data);
      const pushed = this.#log.push(event, data, json);
      if (pushed) this.#writer.write(pushed, delta);
      return;
    }
    const pushed = this.#log.push(event, data);
    if (pushed) this.#writer.write(pushed);
  }

  /**
   * How the run's stream ended: the graph's last `values` (the state at its
   * last checkpoint) and whether an interrupt came after them (a review or
   * a task wait pending). Undefined when the stream did not say (no state
   * streamed, or an interrupt without interrupts): the caller reads the
   * checkpoint instead. Meaningful once the stream ended without an error.
   */
  ending(): { values: Record<string, unknown>; interrupted: boolean } | undefined {
    return this.#ending === "unknown" ? undefined : this.#ending;
  }

  /** Emits the events one library chunk stands for, in the client's modes. */
  chunk(mode: string, data: unknown): void {
    if (mode === "values") this.#noteValues(data);
    if (mode === "messages") {
      if (this.#modes.includes("messages-tuple")) this.push("messages", data);
      if (this.#modes.includes("messages"))
        for (const [event, payload] of this.#messages.partial(data)) this.push(event, payload);
      return;
    }
    if (mode === "values" && this.#modes.includes("messages")) {
      const complete = this.#messages.complete(data);
      if (complete.length > 0) this.push("messages/complete", complete);
    }
    if ((this.#modes as string[]).includes(mode)) this.push(mode, data);
  }

  #noteValues(data: unknown): void {
    if (this.#ending === "unknown") return;
    if (data === null || typeof data !== "object" || Array.isArray(data)) {
      this.#ending = "unknown";
      return;
    }
    if (!Object.hasOwn(data, "__interrupt__")) {
      this.#ending = { values: data as Record<string, unknown>, interrupted: false };
      return;
    }
    const interrupts = (data as { __interrupt__?: unknown }).__interrupt__;
    this.#ending =
      this.#ending !== undefined && Array.isArray(interrupts) && interrupts.length > 0
        ? { values: this.#ending.values, interrupted: true }
        : "unknown";
  }

  /** Resolves once every event emitted so far is stored. */
  stored(): Promise<void> {
    return this.#writer.flush();
  }

  /** Closes the in-memory log and stores the end marker. */
  async close(): Promise<void> {
    this.#log.close();
    await this.#writer.close();
  }
}

/** A LangChain `streamEvents` v2 event, as far as the emitter reads it. */
export interface StreamEventV2 {
  event: string;
  name: string;
  run_id: string;
  tags?: string[];
  metadata?: Record<string, unknown>;
  data?: unknown;
  parent_ids?: string[];
}

/**
 * Metadata keys of an event a client sees: LangGraph's step bookkeeping, the
 * thread's ids and the run's client metadata (`clientKeys`, already without
 * the server's keys), never the auth keys.
 */
function visibleEventMetadata(
  metadata: Record<string, unknown> | undefined,
  clientKeys: ReadonlySet<string>,
): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(metadata ?? {}).filter(
      ([key]) =>
        (key.startsWith("langgraph_") && !key.startsWith("langgraph_auth")) ||
        clientKeys.has(key) ||
        ["thread_id", "checkpoint_ns", "run_id", "assistant_id", "graph_id", "ls_provider", "ls_model_name"].includes(
          key,
        ),
    ),
  );
}

/** Builds the SDK's `messages/*` events from `messages`-mode tuples. */
class MessageAccumulator {
  readonly #partial = new Map<string, { concat?(other: unknown): unknown }>();
  readonly #completed = new Set<string>();

  partial(data: unknown): [string, unknown][] {
    if (!Array.isArray(data)) return [];
    const [chunk, metadata] = data as [{ id?: string; concat?(other: unknown): unknown }, unknown];
    if (!chunk || typeof chunk.id !== "string") return [];
    const events: [string, unknown][] = [];
    const existing = this.#partial.get(chunk.id);
    if (!existing) {
      this.#partial.set(chunk.id, chunk);
      events.push(["messages/metadata", { [chunk.id]: { metadata } }]);
    } else if (typeof existing.concat === "function") {
      this.#partial.set(chunk.id, existing.concat(chunk) as typeof existing);
    }
    events.push(["messages/partial", [this.#partial.get(chunk.id)]]);
    return events;
  }

  complete(values: unknown): unknown[] {
    const list = (values as { messages?: unknown } | null)?.messages;
    if (!Array.isArray(list)) return [];
    const fresh = list.filter(
      (message: { id?: unknown }) => typeof message?.id === "string" && !this.#completed.has(message.id as string),
    );
    for (const message of fresh) this.#completed.add((message as { id: string }).id);
    return fresh;
  }
}
