/**
 * The tables behind the thread store (thread-store.ts): threads with their
 * lease, their runs, the run keys and the per-principal admission counts.
 */
import { quoteSchemaName } from "../sql-names.js";
import { admissionMigrations } from "./run-admission.js";
import { runKeyMigrations } from "./run-keys.js";

export function threadMigrations(schema: string): string[] {
  const s = quoteSchemaName(schema);
  return [
    `create schema if not exists ${s}`,
    `create table if not exists ${s}.threads (
      thread_id uuid primary key,
      owner text not null,
      tenant text not null,
      metadata jsonb not null default '{}'::jsonb,
      graph_id text,
      run_bound jsonb not null default '{}'::jsonb,
      status text not null default 'idle',
      active_run uuid,
      lease_until timestamptz,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now()
    )`,
    `create index if not exists threads_by_owner on ${s}.threads (tenant, owner, updated_at desc)`,
    `create table if not exists ${s}.runs (
      run_id uuid primary key,
      thread_id uuid not null references ${s}.threads (thread_id) on delete cascade,
      assistant_id text not null,
      owner text not null,
      tenant text not null,
      status text not null,
      metadata jsonb not null default '{}'::jsonb,
      kwargs jsonb not null default '{}'::jsonb,
      error jsonb,
      cancel_requested boolean not null default false,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now()
    )`,
    `alter table ${s}.runs add column if not exists outcome jsonb`,
    `alter table ${s}.threads add column if not exists state_values jsonb not null default '{}'::jsonb`,
    `create index if not exists runs_by_thread on ${s}.runs (thread_id, created_at desc)`,
    // The orphan sweep looks only at unfinished runs (the per-principal limit counts live leases: run-admission.ts).
    `create index if not exists runs_unfinished on ${s}.runs (thread_id) where status in ('pending', 'running')`,
    `create index if not exists runs_unfinished_by_owner on ${s}.runs (tenant, owner) where status in ('pending', 'running')`,
    ...runKeyMigrations(schema),
    ...admissionMigrations(schema),
  ];
}
