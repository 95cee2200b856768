/** The named behaviour profiles of the simulated model, in the order reports list them. */
import { careful } from "./careful.js";
import { hostile } from "./hostile.js";
import { obedient } from "./obedient.js";
import type { Profile } from "./profile.js";
import { sloppy } from "./sloppy.js";

export const PROFILES: readonly Profile[] = [careful, sloppy, obedient, hostile];

export function findProfile(name: string): Profile | undefined {
  return PROFILES.find((profile) => profile.name === name);
}
