/** Errors of the simulated model endpoint (a simulation: never a real model). */
import { WarrantError } from "../../src/errors.js";

export type SimulationErrorCode = "unknown_profile" | "invalid_seed";

export class SimulationError extends WarrantError {
  declare readonly code: SimulationErrorCode;
  constructor(code: SimulationErrorCode, message: string) {
    super(code, message);
  }
}

export const isSimulationError = (error: unknown): error is SimulationError =>
  typeof error === "object" && error !== null && (error as { name?: unknown }).name === "SimulationError";
