/** An edit form generated from a tool's JSON schema: one labelled field per argument, errors beside it. */
import { kindOf, type Draft } from "../draft";
import type { JsonSchema } from "../types";
import type { FieldError } from "../validate";

export function ArgumentsForm({
  idPrefix,
  schema,
  draft,
  errors,
  onChange,
}: {
  idPrefix: string;
  schema: JsonSchema;
  draft: Draft;
  errors: FieldError[];
  onChange: (draft: Draft) => void;
}) {
  const set = (name: string, value: string | boolean) => onChange({ ...draft, [name]: value });
  const required = new Set(schema.required ?? []);
  return (
    <div className="arguments-form">
      {Object.entries(schema.properties ?? {}).map(([name, property]) => {
        const id = `${idPrefix}-${name}`;
        const kind = kindOf(property);
        const fieldErrors = errors.filter((error) => error.field === name);
        const described = fieldErrors.length > 0 ? `${id}-error` : property.description ? `${id}-hint` : undefined;
        const value = draft[name];
        return (
          <div key={name} className="field">
            <label htmlFor={id}>
              {name}
              {required.has(name) ? " *" : ""}
            </label>
            {kind === "boolean" ? (
              <input
                id={id}
                type="checkbox"
                checked={value === true}
                onChange={(event) => set(name, event.target.checked)}
              />
            ) : kind === "choice" ? (
              <select
                id={id}
                value={String(value ?? "")}
                onChange={(event) => set(name, event.target.value)}
                aria-describedby={described}
              >
                {(property.enum ?? []).map((option) => (
                  <option key={String(option)} value={String(option)}>
                    {String(option)}
                  </option>
                ))}
              </select>
            ) : kind === "json" ? (
              <textarea
                id={id}
                rows={3}
                value={String(value ?? "")}
                onChange={(event) => set(name, event.target.value)}
                aria-describedby={described}
                aria-invalid={fieldErrors.length > 0}
              />
            ) : (
              <input
                id={id}
                name={name}
                type={kind === "number" ? "number" : "text"}
                value={String(value ?? "")}
                onChange={(event) => set(name, event.target.value)}
                aria-describedby={described}
                aria-invalid={fieldErrors.length > 0}
              />
            )}
            {property.description && fieldErrors.length === 0 && (
              <small id={`${id}-hint`} className="hint">
                {property.description}
              </small>
            )}
            {fieldErrors.length > 0 && (
              <small id={`${id}-error`} className="field-error" role="alert">
                {name} {fieldErrors.map((error) => error.message).join("; ")}
              </small>
            )}
          </div>
        );
      })}
    </div>
  );
}
