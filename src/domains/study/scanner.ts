/**
 * A request's text with the parts already understood blanked out, so that
 * each fact is read once (the daily limit is not read again as the total)
 * and what is left over is the topic.
 */
export class Scanner {
  private text: string;

  constructor(readonly original: string) {
    // Typographic dashes and non-breaking spaces read like their plain forms.
    this.text = original.replace(/[\u2010-\u2015]/g, "-").replace(/[\u00a0\u202f]/g, " ");
  }

  /** The text not yet consumed. */
  get rest(): string {
    return this.text;
  }

  /** The first match of `pattern` in what is left, without consuming it. */
  peek(pattern: RegExp): RegExpExecArray | null {
    return new RegExp(pattern.source, pattern.flags.replace("g", "")).exec(this.text);
  }

  /** The first match of `pattern` in what is left, consumed (blanked, keeping positions). */
  take(pattern: RegExp): RegExpExecArray | null {
    const match = this.peek(pattern);
    if (match) this.blank(match.index, match[0].length);
    return match;
  }

  /** Replaces a span with a separator so the words on either side do not join into one. */
  blank(index: number, length: number): void {
    const separator = length >= 2 ? ` ;${" ".repeat(length - 2)}` : " ".repeat(length);
    this.text = `${this.text.slice(0, index)}${separator}${this.text.slice(index + length)}`;
  }

  /** A copy to try a reading on without committing to it. */
  fork(): Scanner {
    const copy = new Scanner(this.original);
    copy.text = this.text;
    return copy;
  }

  /** Adopts what a fork consumed. */
  adopt(fork: Scanner): void {
    this.text = fork.text;
  }
}
