/** Names of the policy engines and why one could not decide: the bottom of the import graph, imports nothing. */
export const ENGINE_NAMES = ["builtin", "cedar"] as const;
export type EngineName = (typeof ENGINE_NAMES)[number];

/** Why a policy engine could not decide a call: it is refused (fail closed) with this reason. */
export const ENGINE_ERRORS = ["evaluation_error", "missing_entity", "policies_invalid"] as const;
export type EngineError = (typeof ENGINE_ERRORS)[number];
