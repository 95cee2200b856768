/**
 * What each load principal may see, and the check every response goes
 * through: a response to one principal must carry nothing of another's.
 *
 * A response leaks when it contains any of:
 * - a thread or run id that another principal created (ids are registered
 *   as the load creates them);
 * - a note the principal may not read (another course, or unreleased
 *   without `notes:read_unreleased`): its note id, or a passage of its text;
 * - a case of another tenant (its case id).
 * Markers are literal substrings, so the check works on JSON bodies and on
 * SSE streams alike.
 */
import fs from "node:fs/promises";
import path from "node:path";
import { z } from "zod";
import { grantsOf, type Principal } from "../src/auth/principal.js";

const NoteFile = z.object({
  notes: z.array(z.object({ note_id: z.string(), course: z.string(), released: z.boolean(), text: z.string() })),
});
const CaseFile = z.object({ cases: z.array(z.object({ case_id: z.string(), tenant: z.string() })) });

/** How much of a forbidden note's text counts as its passage. */
const PASSAGE_CHARS = 60;
const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g;

/** One principal's forbidden markers, each with what it stands for. */
export type Forbidden = ReadonlyMap<string, string>;

/** A datum of another principal found in a response. */
export interface Leak {
  user: string;
  what: string;
  where: string;
}

/** Who created each thread and run id during the load. */
export class Ownership {
  readonly #owners = new Map<string, string>();

  record(id: string, user: string): void {
    this.#owners.set(id, user);
  }

  ownerOf(id: string): string | undefined {
    return this.#owners.get(id);
  }
}

/** The markers `principal` must never receive, from the shipped notes and cases data. */
export async function forbiddenFor(principal: Principal, repoRoot: string): Promise<Forbidden> {
  const notes = NoteFile.parse(
    JSON.parse(await fs.readFile(path.join(repoRoot, "tools/notes/data/notes.json"), "utf8")),
  ).notes;
  const cases = CaseFile.parse(
    JSON.parse(await fs.readFile(path.join(repoRoot, "tools/caseops/data/cases.json"), "utf8")),
  ).cases;
  const courses = new Set(grantsOf(principal, "courses"));
  const unreleased = principal.scopes.includes("notes:read_unreleased");
  const visible = (note: (typeof notes)[number]) => courses.has(note.course) && (note.released || unreleased);
  const visibleText = notes.filter(visible).map((note) => note.text);
  const markers = new Map<string, string>();
  for (const note of notes.filter((item) => !visible(item))) {
    markers.set(note.note_id, `note ${note.note_id}`);
    const passage = note.text.slice(0, PASSAGE_CHARS);
    // A passage that a visible note shares is not evidence of a leak.
    if (passage.length === PASSAGE_CHARS && !visibleText.some((text) => text.includes(passage)))
      markers.set(passage, `text of note ${note.note_id}`);
  }
  for (const item of cases)
    if (item.tenant !== principal.tenant) markers.set(item.case_id, `case ${item.case_id} of tenant ${item.tenant}`);
  return markers;
}

/** Every datum of another principal in `body`, a response to `user`. */
export function leaksIn(body: string, user: string, forbidden: Forbidden, ownership: Ownership, where: string): Leak[] {
  const leaks: Leak[] = [];
  for (const id of new Set(body.match(UUID) ?? [])) {
    const owner = ownership.ownerOf(id);
    if (owner !== undefined && owner !== user) leaks.push({ user, what: `id ${id} of ${owner}`, where });
  }
  for (const [marker, what] of forbidden) if (body.includes(marker)) leaks.push({ user, what, where });
  return leaks;
}
