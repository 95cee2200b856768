/**
 * One principal's view of the store. Every namespace it is given is placed
 * under a prefix the server fixes for the principal
 * (`["tenants", <tenant>, "users", <user_id>, …]`), and every namespace it
 * returns has that prefix taken off again: a client (or a graph node) can
 * neither name another user's items nor see the prefix to forge it. A
 * reviewer gets this same view of their own items, no wider.
 *
 * The same object serves the HTTP routes (`routes/store.ts`) and the graphs
 * (`config.store`: a LangGraph `BaseStore`, given to each run for its owner).
 */
import {
  BaseStore,
  type GetOperation,
  type Item,
  type ListNamespacesOperation,
  type Operation,
  type OperationResults,
  type PutOperation,
  type SearchOperation,
} from "@langchain/langgraph";
import type { Owner } from "./thread-rows.js";
import type { ItemTable, StoredItem } from "./store-item-table.js";
import { checkFilter, checkKey, checkNamespace, checkValue } from "./store-item-input.js";
import { StoreInputError, type StoreInputProblem } from "../errors.js";

/** The labels the server puts in front of every namespace of `owner`. */
export function storePrefix(owner: Owner): string[] {
  return ["tenants", owner.tenant, "users", owner.user_id];
}

const MAX_LIMIT = 1000;

export class PrincipalStore extends BaseStore {
  readonly #table: ItemTable;
  readonly #prefix: string[];

  constructor(table: ItemTable, owner: Owner) {
    super();
    this.#table = table;
    this.#prefix = storePrefix(owner);
  }

  async batch<Op extends Operation[]>(operations: Op): Promise<OperationResults<Op>> {
    const results: unknown[] = [];
    for (const operation of operations) results.push(await this.#run(operation));
    return results as OperationResults<Op>;
  }

  async #run(operation: Operation): Promise<unknown> {
    if ("key" in operation && "value" in operation) return this.#put(operation as PutOperation);
    if ("key" in operation) return this.#get(operation as GetOperation);
    if ("namespacePrefix" in operation) return this.#search(operation as SearchOperation);
    return this.#list(operation as ListNamespacesOperation);
  }

  async #get(operation: GetOperation): Promise<Item | null> {
    const namespace = this.#absolute(operation.namespace, "namespace", false);
    const key = valid(checkKey(operation.key));
    const item = await this.#table.get(namespace, key);
    return item ? this.#relative(item) : null;
  }

  async #put(operation: PutOperation): Promise<void> {
    const namespace = this.#absolute(operation.namespace, "namespace", false);
    const key = valid(checkKey(operation.key));
    if (operation.value === null) return this.#table.delete(namespace, key);
    if (operation.index !== undefined && operation.index !== false)
      throw new StoreInputError({ path: "index", reason: "no embedding model is configured: items are not indexed" });
    return this.#table.put(namespace, key, valid(checkValue(operation.value)));
  }

  async #search(operation: SearchOperation): Promise<Item[]> {
    if (operation.query !== undefined && operation.query !== null)
      throw new StoreInputError({
        path: "query",
        reason: "semantic search needs an embedding model; none is configured",
      });
    const prefix = this.#absolute(operation.namespacePrefix, "namespace_prefix", true);
    const filter = valid(checkFilter(operation.filter));
    const items = await this.#table.search({
      prefix,
      filter,
      limit: bounded(operation.limit ?? 10, "limit", 1),
      offset: bounded(operation.offset ?? 0, "offset", 0, 1_000_000),
    });
    return items.map((item) => this.#relative(item));
  }

  async #list(operation: ListNamespacesOperation): Promise<string[][]> {
    let prefix: string[] = [];
    let suffix: string[] | undefined;
    for (const condition of operation.matchConditions ?? []) {
      const path = valid(checkNamespace(condition.path, condition.matchType, { allowEmpty: true }));
      if (path.includes("*"))
        throw new StoreInputError({ path: condition.matchType, reason: "wildcards are not supported" });
      if (condition.matchType === "prefix") prefix = path;
      else suffix = path;
    }
    const maxDepth = operation.maxDepth === undefined ? undefined : bounded(operation.maxDepth, "max_depth", 1, 64);
    const namespaces = await this.#table.listNamespaces({
      prefix: this.#absolute(prefix, "prefix", true),
      suffix,
      // The client counts depth from its own root, below the server's prefix.
      maxDepth: maxDepth === undefined ? undefined : maxDepth + this.#prefix.length,
      limit: bounded(operation.limit, "limit", 1),
      offset: bounded(operation.offset, "offset", 0, 1_000_000),
    });
    return namespaces.map((namespace) => namespace.slice(this.#prefix.length)).filter((ns) => ns.length > 0);
  }

  #absolute(namespace: unknown, path: string, allowEmpty: boolean): string[] {
    return [...this.#prefix, ...valid(checkNamespace(namespace, path, { allowEmpty }))];
  }

  #relative(item: StoredItem): Item {
    return { ...item, namespace: item.namespace.slice(this.#prefix.length) };
  }
}

function valid<T>(checked: { ok: true; value: T } | { ok: false; problem: StoreInputProblem }): T {
  if (!checked.ok) throw new StoreInputError(checked.problem);
  return checked.value;
}

function bounded(value: unknown, path: string, min: number, max = MAX_LIMIT): number {
  if (typeof value !== "number" || !Number.isInteger(value) || value < min || value > max)
    throw new StoreInputError({ path, reason: `must be an integer from ${min} to ${max}` });
  return value;
}
