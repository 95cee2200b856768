/**
 * Where the calendar keeps its events, behind one interface: a JSON file
 * (the embedded setup: one process by design) or a Postgres table (several
 * server processes, each with its own calendar child, share one database).
 * Both apply the same idempotency rule (calendar.ts); the server's test
 * switches sit around these calls, so they work the same for both.
 */
import {
  CalendarFile,
  getWriteStatus,
  listEvents,
  planCreate,
  type CalendarError,
  type CreatePlan,
  type CreateStudyEventInput,
  type CreateStudyEventResult,
  type GetWriteStatusInput,
  type ListEventsInput,
  type ListEventsResult,
  type WriteStatus,
} from "./calendar.js";

export type ListOutcome =
  | { readonly ok: true; readonly result: ListEventsResult }
  | { readonly ok: false; readonly error: CalendarError };

/** What `create` decided; unlike {@link CreatePlan} it carries no store (it is already persisted). */
export type CreateOutcome =
  | Exclude<CreatePlan, { kind: "created" }>
  | { readonly kind: "created"; readonly result: CreateStudyEventResult };

export interface CalendarStoreBackend {
  /** For the start-up line: the file path or the database table. */
  readonly label: string;
  /**
   * Whether a failure of `create` may have applied the write. The file store
   * writes with one rename, so a throw means nothing was applied; a database
   * may fail after its commit.
   */
  readonly failureMayHaveApplied: boolean;
  /** How many events are stored (read at start-up, so a broken store fails fast). */
  count(): Promise<number>;
  list(input: ListEventsInput): Promise<ListOutcome>;
  /** Creates, replays or rejects, and persists a created event before resolving. */
  create(input: CreateStudyEventInput): Promise<CreateOutcome>;
  status(input: GetWriteStatusInput): Promise<WriteStatus>;
  close(): Promise<void>;
}

/** The store file: every read fresh from disk, every write a locked read-modify-rename. */
export function fileStore(filePath: string): CalendarStoreBackend {
  const file = new CalendarFile(filePath);
  return {
    label: filePath,
    failureMayHaveApplied: false,
    count: async () => (await file.read()).events.length,
    list: async (input) => listEvents(await file.read(), input),
    async create(input) {
      const plan = await file.update<CreatePlan>((store) => {
        const decided = planCreate(store, input);
        return decided.kind === "created" ? { store: decided.store, value: decided } : { value: decided };
      });
      return plan.kind === "created" ? { kind: "created", result: plan.result } : plan;
    },
    status: async (input) => getWriteStatus(await file.read(), input),
    close: async () => undefined,
  };
}
