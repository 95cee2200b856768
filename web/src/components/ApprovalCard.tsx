/**
 * One action waiting for review: its tool, where it writes, its arguments,
 * the expiry countdown, and the reviewer's choice (approve, edit the
 * arguments, or reject with a message).
 */
import type { Draft } from "../draft";
import type { JsonSchema, ToolInfo } from "../types";
import type { FieldError } from "../validate";
import { ArgumentsForm } from "./ArgumentsForm";
import { Countdown } from "./Countdown";

export type Choice = "approve" | "edit" | "reject";

export interface CardState {
  choice: Choice | undefined;
  draft: Draft;
  message: string;
  errors: FieldError[];
}

interface Props {
  index: number;
  actionId: string;
  name: string;
  args: Record<string, unknown>;
  description: string | undefined;
  expiresAt: string;
  allowed: string[];
  tool: ToolInfo | undefined;
  schema: JsonSchema;
  state: CardState;
  onChange: (state: CardState) => void;
}

const LABELS: Record<Choice, string> = { approve: "Approve", edit: "Edit", reject: "Reject" };

export function ApprovalCard({
  index,
  actionId,
  name,
  args,
  description,
  expiresAt,
  allowed,
  tool,
  schema,
  state,
  onChange,
}: Props) {
  const id = `action-${index}`;
  const destination = [
    tool ? `${tool.server} server` : "unknown server",
    tool?.risk,
    typeof args.calendar === "string" ? `calendar “${args.calendar}”` : undefined,
  ]
    .filter(Boolean)
    .join(" · ");
  return (
    <article
      className="approval-card"
      aria-labelledby={`${id}-title`}
      data-action-id={actionId}
      data-choice={state.choice ?? ""}
    >
      <header>
        <h3 id={`${id}-title`}>
          {index + 1}. <code>{name}</code>
        </h3>
        <Countdown until={expiresAt} />
      </header>
      {description && <p className="description">{description}</p>}
      <p className="destination">
        Writes to: <span>{destination}</span>
      </p>
      <dl className="args">
        {Object.entries(args).map(([key, value]) => (
          <div key={key}>
            <dt>{key}</dt>
            <dd>{typeof value === "string" ? value : JSON.stringify(value)}</dd>
          </div>
        ))}
      </dl>
      <fieldset>
        <legend>Decision for action {index + 1}</legend>
        <div className="row">
          {(["approve", "edit", "reject"] as const)
            .filter((choice) => allowed.includes(choice))
            .map((choice) => (
              <label key={choice} className="choice">
                <input
                  type="radio"
                  name={`${id}-choice`}
                  value={choice}
                  checked={state.choice === choice}
                  onChange={() => onChange({ ...state, choice, errors: [] })}
                />
                {LABELS[choice]}
              </label>
            ))}
        </div>
      </fieldset>
      {state.choice === "edit" && (
        <ArgumentsForm
          idPrefix={id}
          schema={schema}
          draft={state.draft}
          errors={state.errors}
          onChange={(draft) => onChange({ ...state, draft, errors: [] })}
        />
      )}
      {state.choice === "reject" && (
        <div className="field">
          <label htmlFor={`${id}-message`}>Why (shown to the agent)</label>
          <input
            id={`${id}-message`}
            type="text"
            maxLength={2000}
            value={state.message}
            onChange={(event) => onChange({ ...state, message: event.target.value })}
          />
        </div>
      )}
    </article>
  );
}
