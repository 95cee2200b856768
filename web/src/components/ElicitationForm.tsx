/**
 * A form for a server's question during a tool call (elicitation). The
 * fields come from the server's requested schema, prefilled with its
 * defaults; the server's message is shown as text. Send, Decline or Cancel
 * answer it; a refused answer names the fields the server found wrong.
 */
import { useState, type FormEvent } from "react";
import type { AnswerRefusal, Elicitation, ElicitationAnswer, ElicitationField } from "../elicitation";
import { Countdown } from "./Countdown";

type Values = Record<string, string | boolean | string[]>;

function initialValues(question: Elicitation): Values {
  const values: Values = {};
  for (const [name, field] of Object.entries(question.requested_schema.properties)) {
    const preset = question.defaults[name] ?? field.default;
    if (field.type === "boolean") values[name] = preset === true;
    else if (field.type === "array") values[name] = Array.isArray(preset) ? preset.map(String) : [];
    else values[name] = preset === undefined ? "" : String(preset);
  }
  return values;
}

/** The form's values as the server's types; empty optional fields are left out (the server's default applies). */
function contentOf(question: Elicitation, values: Values): Record<string, unknown> {
  const content: Record<string, unknown> = {};
  for (const [name, field] of Object.entries(question.requested_schema.properties)) {
    const value = values[name];
    if (field.type === "boolean" || field.type === "array") content[name] = value;
    else if (value === "") continue;
    else if (field.type === "number" || field.type === "integer") content[name] = Number(value);
    else content[name] = value;
  }
  return content;
}

function choicesOf(field: ElicitationField): { value: string; label: string }[] | null {
  if (field.enum) return field.enum.map((value) => ({ value, label: value }));
  if (field.oneOf) return field.oneOf.map((option) => ({ value: option.const, label: option.title }));
  return null;
}

function inputType(field: ElicitationField): string {
  if (field.type === "number" || field.type === "integer") return "number";
  if (field.format === "date") return "date";
  if (field.format === "email") return "email";
  if (field.format === "uri") return "url";
  return "text";
}

export function ElicitationForm({
  question,
  onAnswer,
}: {
  question: Elicitation;
  onAnswer: (answer: ElicitationAnswer) => Promise<AnswerRefusal | null>;
}) {
  const [values, setValues] = useState<Values>(() => initialValues(question));
  const [refusal, setRefusal] = useState<AnswerRefusal | null>(null);
  const [sending, setSending] = useState(false);
  const required = new Set(question.requested_schema.required ?? []);
  const set = (name: string, value: string | boolean | string[]) => setValues((old) => ({ ...old, [name]: value }));

  const answer = async (sent: ElicitationAnswer) => {
    setSending(true);
    setRefusal(await onAnswer(sent).finally(() => setSending(false)));
  };
  const submit = (event: FormEvent) => {
    event.preventDefault();
    void answer({ action: "accept", content: contentOf(question, values) });
  };

  return (
    <section className="elicitation" aria-label={`Question from the ${question.server} server`}>
      <h2>
        The {question.server} server asks <Countdown until={question.expires_at} />
      </h2>
      <p className="elicitation-message">{question.message}</p>
      <p className="destination">during {question.tool}; only you can answer, the agent never sees this form</p>
      <form onSubmit={submit}>
        {Object.entries(question.requested_schema.properties).map(([name, field]) => {
          const label = `${field.title ?? name}${required.has(name) ? " (required)" : ""}`;
          const choices = field.type === "array" ? null : choicesOf(field);
          const value = values[name];
          const problem = refusal?.problems.find((item) => item.field === name);
          return (
            <div className="field" key={name} data-field={name}>
              {field.type === "boolean" ? (
                <label>
                  <input
                    type="checkbox"
                    checked={value === true}
                    onChange={(event) => set(name, event.target.checked)}
                  />
                  {label}
                </label>
              ) : field.type === "array" ? (
                <fieldset>
                  <legend>{label}</legend>
                  {(field.items?.enum ?? field.items?.anyOf?.map((option) => option.const) ?? []).map((option) => (
                    <label key={option}>
                      <input
                        type="checkbox"
                        checked={Array.isArray(value) && value.includes(option)}
                        onChange={(event) => {
                          const chosen = Array.isArray(value) ? value : [];
                          set(
                            name,
                            event.target.checked ? [...chosen, option] : chosen.filter((item) => item !== option),
                          );
                        }}
                      />
                      {option}
                    </label>
                  ))}
                </fieldset>
              ) : choices ? (
                <label>
                  {label}
                  <select value={String(value)} onChange={(event) => set(name, event.target.value)}>
                    <option value="">—</option>
                    {choices.map((choice) => (
                      <option key={choice.value} value={choice.value}>
                        {choice.label}
                      </option>
                    ))}
                  </select>
                </label>
              ) : (
                <label>
                  {label}
                  <input
                    type={inputType(field)}
                    value={String(value)}
                    step={field.type === "integer" ? 1 : "any"}
                    onChange={(event) => set(name, event.target.value)}
                  />
                </label>
              )}
              {field.description && <small>{field.description}</small>}
              {problem && (
                <span role="alert" className="field-problem" data-problem={problem.problem}>
                  {name}: {problem.problem.replaceAll("_", " ")}
                </span>
              )}
            </div>
          );
        })}
        {refusal && refusal.problems.length === 0 && (
          <p role="alert" className="field-problem" data-code={refusal.code}>
            The server refused the answer ({refusal.code}).
          </p>
        )}
        <div className="actions">
          <button type="submit" disabled={sending}>
            Send answer
          </button>
          <button type="button" disabled={sending} onClick={() => void answer({ action: "decline" })}>
            Decline
          </button>
          <button type="button" disabled={sending} onClick={() => void answer({ action: "cancel" })}>
            Cancel
          </button>
        </div>
      </form>
    </section>
  );
}
