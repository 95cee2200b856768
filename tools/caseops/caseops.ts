/**
 * Pure logic behind the `caseops` MCP server: the shipped case data and its
 * validation, the tenant boundary, the deterministic document-alias table, and
 * the tool input/output schemas.
 *
 * The caller (tenant, subject, task, scopes) always comes from a verified task
 * token, never from tool arguments: no tool here takes a tenant. Nothing touches
 * the file system when imported; `loadCaseData` reads a file only when called.
 */
import { readFile } from "node:fs/promises";
import { z } from "zod";

// ---------------------------------------------------------------------------
// Identifiers and constants
// ---------------------------------------------------------------------------

/** Case ids such as `C-102`. */
export const CASE_ID_PATTERN = /^C-[0-9]{3}$/;

/** Document ids such as `DOC-7781`. */
export const DOCUMENT_ID_PATTERN = /^DOC-[0-9]{4}$/;

/** The scope every caseops tool requires. */
export const CASES_READ_SCOPE = "cases:read";

/** Canonical document codes the policies and the alias table speak in. */
export const DOCUMENT_CODES = [
  "LOSS_STATEMENT",
  "IDENTITY_DOCUMENT",
  "ACCIDENT_CERTIFICATE",
  "PROPERTY_VALUATION",
] as const;
export type DocumentCode = (typeof DOCUMENT_CODES)[number];

/** A business error as the tool reports it: `isError: true`, this JSON as text. */
export interface CaseopsError {
  readonly code: "access_denied";
  readonly message: string;
}

/**
 * The single answer for a case that does not exist and a case of another
 * tenant. Byte-identical in both situations, so a caller cannot probe which
 * case ids exist elsewhere (DESIGN §6).
 */
export const CASE_ACCESS_DENIED: CaseopsError = { code: "access_denied", message: "case not found or not accessible" };

/** The same rule one level down: a document id that is not an unclassified document of this (accessible) case. */
export const DOCUMENT_ACCESS_DENIED: CaseopsError = {
  code: "access_denied",
  message: "document not found or not accessible",
};

/** The token does not grant {@link CASES_READ_SCOPE}; checked before any lookup, so it reveals nothing about cases. */
export const SCOPE_DENIED: CaseopsError = {
  code: "access_denied",
  message: `the task token does not grant ${CASES_READ_SCOPE}`,
};

/** Serializes an error exactly as the server sends it. */
export function errorText(error: CaseopsError): string {
  return JSON.stringify({ code: error.code, message: error.message });
}

// ---------------------------------------------------------------------------
// Data schema
// ---------------------------------------------------------------------------

const TENANT = /^[a-z0-9_-]{1,64}$/;
const timestamp = z.iso.datetime();
const sourceId = z.string().min(1).max(200);
const documentCode = z.enum(DOCUMENT_CODES);

const ClassifiedDocumentSchema = z
  .object({
    document_id: z.string().regex(DOCUMENT_ID_PATTERN),
    code: documentCode,
    received_at: timestamp,
    source_id: sourceId,
  })
  .strict();

const UnclassifiedDocumentSchema = z
  .object({
    document_id: z.string().regex(DOCUMENT_ID_PATTERN),
    title: z.string().min(1).max(200),
    received_at: timestamp,
    source_id: sourceId,
  })
  .strict();

const CaseRecordSchema = z
  .object({
    case_id: z.string().regex(CASE_ID_PATTERN),
    tenant: z.string().regex(TENANT),
    claim_type: z.string().min(1).max(40),
    status: z.string().min(1).max(40),
    version: z.number().int().min(1),
    rule_version: z.string().min(1).max(40),
    source_id: sourceId,
    documents: z.array(ClassifiedDocumentSchema),
    unclassified_documents: z.array(UnclassifiedDocumentSchema),
  })
  .strict();

const PolicySchema = z
  .object({
    rule_version: z.string().min(1).max(40),
    claim_type: z.string().min(1).max(40),
    required_documents: z.array(documentCode).min(1),
    source_id: sourceId,
  })
  .strict();

const AliasEntrySchema = z
  .object({
    title: z.string().min(1).max(200),
    normalized_code: documentCode,
    confidence: z.number().min(0).max(1),
  })
  .strict();

/** The whole shipped data file. Cross-references are checked: see {@link parseCaseData}. */
export const CaseDataSchema = z
  .object({
    version: z.number().int().min(1),
    alias_table: z
      .object({ version: z.string().min(1), source_id: sourceId, entries: z.array(AliasEntrySchema) })
      .strict(),
    policies: z.array(PolicySchema),
    cases: z.array(CaseRecordSchema),
  })
  .strict()
  .superRefine((data, context) => {
    const policies = new Map(data.policies.map((policy) => [policy.rule_version, policy]));
    if (policies.size !== data.policies.length)
      context.addIssue({ code: "custom", path: ["policies"], message: "duplicate rule_version" });

    const titles = new Set<string>();
    data.alias_table.entries.forEach((entry, position) => {
      const key = normalizeTitle(entry.title);
      if (titles.has(key))
        context.addIssue({
          code: "custom",
          path: ["alias_table", "entries", position],
          message: `duplicate alias ${entry.title}`,
        });
      titles.add(key);
    });

    // Case and document ids are global, so a lookup by id can never land in two tenants at once.
    const caseIds = new Set<string>();
    const documentIds = new Set<string>();
    data.cases.forEach((record, position) => {
      if (caseIds.has(record.case_id))
        context.addIssue({
          code: "custom",
          path: ["cases", position, "case_id"],
          message: `duplicate case ${record.case_id}`,
        });
      caseIds.add(record.case_id);
      const policy = policies.get(record.rule_version);
      if (policy === undefined) {
        context.addIssue({
          code: "custom",
          path: ["cases", position, "rule_version"],
          message: `unknown rule_version ${record.rule_version}`,
        });
      } else if (policy.claim_type !== record.claim_type) {
        context.addIssue({
          code: "custom",
          path: ["cases", position, "claim_type"],
          message: `rule ${policy.rule_version} is for ${policy.claim_type} claims`,
        });
      }
      for (const document of [...record.documents, ...record.unclassified_documents]) {
        if (documentIds.has(document.document_id)) {
          context.addIssue({
            code: "custom",
            path: ["cases", position],
            message: `duplicate document ${document.document_id}`,
          });
        }
        documentIds.add(document.document_id);
      }
    });
  });

export type CaseData = z.infer<typeof CaseDataSchema>;
export type CaseRecord = z.infer<typeof CaseRecordSchema>;
export type Policy = z.infer<typeof PolicySchema>;
type AliasEntry = z.infer<typeof AliasEntrySchema>;

/** Lookup tables built once from validated data. */
export interface CaseIndex {
  readonly cases: ReadonlyMap<string, CaseRecord>;
  readonly policies: ReadonlyMap<string, Policy>;
  readonly aliases: ReadonlyMap<string, AliasEntry>;
  readonly aliasSourceId: string;
}

/**
 * Validates raw JSON as case data.
 * @throws Error listing the problems when the data is invalid.
 */
export function parseCaseData(raw: unknown): CaseData {
  const result = CaseDataSchema.safeParse(raw);
  if (!result.success) throw new Error(`invalid caseops data:\n${z.prettifyError(result.error)}`);
  return result.data;
}

/** Reads and validates a case data file. */
export async function loadCaseData(filePath: string): Promise<CaseData> {
  let raw: unknown;
  try {
    raw = JSON.parse(await readFile(filePath, "utf8"));
  } catch (error) {
    throw new Error(`cannot read caseops data ${filePath}: ${error instanceof Error ? error.message : String(error)}`);
  }
  return parseCaseData(raw);
}

/** Builds the lookup tables. */
export function buildCaseIndex(data: CaseData): CaseIndex {
  return {
    cases: new Map(data.cases.map((record) => [record.case_id, record])),
    policies: new Map(data.policies.map((policy) => [policy.rule_version, policy])),
    aliases: new Map(data.alias_table.entries.map((entry) => [normalizeTitle(entry.title), entry])),
    aliasSourceId: data.alias_table.source_id,
  };
}

/** Title key for the alias table: case, surrounding space and inner runs of whitespace do not matter. */
export function normalizeTitle(title: string): string {
  return title.normalize("NFKC").trim().replace(/\s+/g, " ").toLowerCase();
}

// ---------------------------------------------------------------------------
// Evidence references
// ---------------------------------------------------------------------------

/** A case snapshot at one version, e.g. `case:C-102@v3`. */
export const caseEvidenceRef = (record: CaseRecord): string => `case:${record.case_id}@v${record.version}`;
/** A pinned rule version, e.g. `policy:motor-2026.1`. */
export const policyEvidenceRef = (policy: Policy): string => `policy:${policy.rule_version}`;
/** A source document, e.g. `document:DOC-7781`. */
export const documentEvidenceRef = (documentId: string): string => `document:${documentId}`;
/** The alias resolution of one document, e.g. `alias:DOC-7781`. */
export const aliasEvidenceRef = (documentId: string): string => `alias:${documentId}`;

// ---------------------------------------------------------------------------
// Tool schemas (shared by the server and the tests)
// ---------------------------------------------------------------------------

const caseIdField = z.string().regex(CASE_ID_PATTERN).describe("Case id, e.g. C-102.");

/** Input of `get_case_snapshot`, `get_policy_requirements` and `list_unclassified_documents`. */
export const CaseInputSchema = z.object({ case_id: caseIdField }).strict();

/** Input of `resolve_document_alias`. */
export const ResolveAliasInputSchema = z
  .object({
    case_id: caseIdField,
    document_id: z
      .string()
      .regex(DOCUMENT_ID_PATTERN)
      .describe("Id of an unclassified document of that case, e.g. DOC-7781."),
  })
  .strict();

export const CaseSnapshotSchema = z.object({
  case_id: z.string(),
  tenant: z.string(),
  claim_type: z.string(),
  status: z.string(),
  rule_version: z.string(),
  document_codes: z.array(documentCode),
  source_id: z.string(),
  evidence_ref: z.string(),
  version: z.number().int().min(1),
});

export const PolicyRequirementsSchema = z.object({
  case_id: z.string(),
  rule_version: z.string(),
  required_documents: z.array(documentCode),
  source_id: z.string(),
  evidence_ref: z.string(),
});

export const UnclassifiedDocumentsSchema = z.object({
  case_id: z.string(),
  documents: z.array(
    z.object({
      document_id: z.string(),
      title: z.string(),
      received_at: z.string(),
      source_id: z.string(),
      evidence_ref: z.string(),
    }),
  ),
});

export const AliasResolutionSchema = z.object({
  document_id: z.string(),
  title: z.string(),
  normalized_code: documentCode.nullable(),
  confidence: z.number().min(0).max(1),
  source_id: z.string(),
  evidence_ref: z.string(),
});

export type CaseSnapshot = z.infer<typeof CaseSnapshotSchema>;
export type PolicyRequirements = z.infer<typeof PolicyRequirementsSchema>;
export type UnclassifiedDocuments = z.infer<typeof UnclassifiedDocumentsSchema>;
export type AliasResolution = z.infer<typeof AliasResolutionSchema>;

// ---------------------------------------------------------------------------
// Queries
// ---------------------------------------------------------------------------

/** Who is asking, taken from the verified task token of the current request. */
export interface Caller {
  readonly tenant: string;
  readonly subject: string;
  readonly task: string;
  readonly scopes: readonly string[];
}

/** A query outcome: the payload, or the business error to report. */
export type Outcome<T> = { ok: true; value: T } | { ok: false; error: CaseopsError };

const denied = <T>(error: CaseopsError): Outcome<T> => ({ ok: false, error });

/** The scope check, then the tenant boundary: a case the caller's tenant does not own is indistinguishable from none. */
function accessibleCase(index: CaseIndex, caller: Caller, caseId: string): Outcome<CaseRecord> {
  if (!caller.scopes.includes(CASES_READ_SCOPE)) return denied(SCOPE_DENIED);
  const record = index.cases.get(caseId);
  if (record === undefined || record.tenant !== caller.tenant) return denied(CASE_ACCESS_DENIED);
  return { ok: true, value: record };
}

/** The structured view of a case: which document codes are on file, under which rule version. */
export function getCaseSnapshot(index: CaseIndex, caller: Caller, caseId: string): Outcome<CaseSnapshot> {
  const found = accessibleCase(index, caller, caseId);
  if (!found.ok) return found;
  const record = found.value;
  return {
    ok: true,
    value: {
      case_id: record.case_id,
      tenant: record.tenant,
      claim_type: record.claim_type,
      status: record.status,
      rule_version: record.rule_version,
      document_codes: [...new Set(record.documents.map((document) => document.code))],
      source_id: record.source_id,
      evidence_ref: caseEvidenceRef(record),
      version: record.version,
    },
  };
}

/** The documents the case's pinned rule version requires. */
export function getPolicyRequirements(index: CaseIndex, caller: Caller, caseId: string): Outcome<PolicyRequirements> {
  const found = accessibleCase(index, caller, caseId);
  if (!found.ok) return found;
  const policy = index.policies.get(found.value.rule_version);
  // parseCaseData guarantees the reference; fail closed rather than invent requirements if it ever breaks.
  if (policy === undefined) return denied(CASE_ACCESS_DENIED);
  return {
    ok: true,
    value: {
      case_id: found.value.case_id,
      rule_version: policy.rule_version,
      required_documents: [...policy.required_documents],
      source_id: policy.source_id,
      evidence_ref: policyEvidenceRef(policy),
    },
  };
}

/** Source documents the upstream system has not normalized to a code. */
export function listUnclassifiedDocuments(
  index: CaseIndex,
  caller: Caller,
  caseId: string,
): Outcome<UnclassifiedDocuments> {
  const found = accessibleCase(index, caller, caseId);
  if (!found.ok) return found;
  return {
    ok: true,
    value: {
      case_id: found.value.case_id,
      documents: found.value.unclassified_documents.map((document) => ({
        document_id: document.document_id,
        title: document.title,
        received_at: document.received_at,
        source_id: document.source_id,
        evidence_ref: documentEvidenceRef(document.document_id),
      })),
    },
  };
}

/**
 * Maps an unclassified document's title to a canonical code through the fixed
 * alias table: an exact match after {@link normalizeTitle}, or `null` with
 * confidence 0. No fuzzy matching, so the same input always gives the same answer.
 */
export function resolveDocumentAlias(
  index: CaseIndex,
  caller: Caller,
  caseId: string,
  documentId: string,
): Outcome<AliasResolution> {
  const found = accessibleCase(index, caller, caseId);
  if (!found.ok) return found;
  const document = found.value.unclassified_documents.find((candidate) => candidate.document_id === documentId);
  if (document === undefined) return denied(DOCUMENT_ACCESS_DENIED);
  const entry = index.aliases.get(normalizeTitle(document.title));
  return {
    ok: true,
    value: {
      document_id: document.document_id,
      title: document.title,
      normalized_code: entry?.normalized_code ?? null,
      confidence: entry?.confidence ?? 0,
      source_id: index.aliasSourceId,
      evidence_ref: aliasEvidenceRef(document.document_id),
    },
  };
}
