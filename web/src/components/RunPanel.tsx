/** The latest run of the thread: why it stopped, what it spent, its tool ledger and its denied proposals. */
import { useRunDenials } from "../use-run-denials";
import { ledgerOf, terminationOf, usageOf } from "../read";
import type { AgentValues, Budgets } from "../types";
import { BudgetTable } from "./BudgetTable";
import { DenialList } from "./DenialList";
import { LedgerTable } from "./LedgerTable";
import { Termination } from "./Termination";

export function RunPanel({
  values,
  budgets,
  live,
  asked = false,
}: {
  values: AgentValues;
  budgets: Budgets;
  live: boolean;
  /** The run ended asking a question (shown as the assistant's question): no "stopped" line besides it. */
  asked?: boolean;
}) {
  const denials = useRunDenials(values);
  const usage = usageOf(values);
  const termination = terminationOf(values);
  return (
    <section className="run-panel" aria-label="This run">
      {!live && !asked && termination && <Termination reason={termination} />}
      <LedgerTable rows={ledgerOf(values)} />
      <DenialList denials={denials} />
      {usage && <BudgetTable usage={usage} budgets={budgets} />}
    </section>
  );
}
