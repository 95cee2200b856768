/** Positional parameters for one statement, shared by every store that builds SQL from parts. */
export class Params {
  readonly values: unknown[];
  /** `initial`: values the statement already has ($1…); added ones are numbered after them. */
  constructor(initial: readonly unknown[] = []) {
    this.values = [...initial];
  }
  add(value: unknown, cast = "text"): string {
    this.values.push(value);
    return `$${this.values.length}::${cast}`;
  }
}
