/**
 * Where a JSON text stops being JSON, as a line and a column a person can go
 * to ("line 41, column 5: expected a property name in double quotes"),
 * rather than the runtime's "position 1283" or a quoted snippet of the whole
 * file. A small checker of the JSON grammar, used only after `JSON.parse`
 * has refused the text. Pure.
 */

/** Deeper than this is reported as a problem of its own (the checker recurses). */
const MAX_DEPTH = 256;

interface Problem {
  offset: number;
  problem: string;
}

class Stop extends Error {
  constructor(readonly at: Problem) {
    super(at.problem);
  }
}

function check(text: string): Problem | undefined {
  let index = 0;
  const fail = (problem: string): never => {
    throw new Stop({ offset: index, problem });
  };
  const shown = () => (index >= text.length ? "the end of the file" : JSON.stringify(text[index]));
  const space = () => {
    while (index < text.length && " \t\n\r".includes(text[index] ?? "")) index += 1;
  };
  const literal = (word: string) => {
    if (text.startsWith(word, index)) index += word.length;
    else fail(`unexpected ${shown()}`);
  };
  const quoted = () => {
    index += 1;
    while (index < text.length) {
      const char = text[index] ?? "";
      if (char === '"') {
        index += 1;
        return;
      }
      if (char === "\\") {
        const escaped = text[index + 1] ?? "";
        if (escaped === "u") {
          if (!/^[0-9a-fA-F]{4}$/.test(text.slice(index + 2, index + 6))) fail("a \\u escape needs four hex digits");
          index += 6;
        } else if ('"\\/bfnrt'.includes(escaped) && escaped !== "") index += 2;
        else fail(`unknown escape \\${escaped}`);
      } else if (char < " ") fail("a control character inside a string (write it escaped, e.g. \\n)");
      else index += 1;
    }
    fail("a string is not closed");
  };
  const number = () => {
    const match = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/.exec(text.slice(index));
    if (!match) fail(`unexpected ${shown()}`);
    index += match?.[0].length ?? 0;
  };
  const value = (depth: number): void => {
    if (depth > MAX_DEPTH) fail(`nested more than ${MAX_DEPTH} levels deep`);
    space();
    const char = text[index];
    if (char === "{") object(depth);
    else if (char === "[") array(depth);
    else if (char === '"') quoted();
    else if (char === "t") literal("true");
    else if (char === "f") literal("false");
    else if (char === "n") literal("null");
    else if (char === "-" || (char !== undefined && char >= "0" && char <= "9")) number();
    else fail(`expected a value, found ${shown()}`);
  };
  const object = (depth: number) => {
    index += 1;
    space();
    if (text[index] === "}") {
      index += 1;
      return;
    }
    for (;;) {
      space();
      if (text[index] !== '"') fail(`expected a property name in double quotes, found ${shown()}`);
      quoted();
      space();
      if (text[index] !== ":") fail(`expected ":" after the property name, found ${shown()}`);
      index += 1;
      value(depth + 1);
      space();
      if (text[index] === ",") {
        index += 1;
        continue;
      }
      if (text[index] === "}") {
        index += 1;
        return;
      }
      fail(`expected "," or "}", found ${shown()}`);
    }
  };
  const array = (depth: number) => {
    index += 1;
    space();
    if (text[index] === "]") {
      index += 1;
      return;
    }
    for (;;) {
      value(depth + 1);
      space();
      if (text[index] === ",") {
        index += 1;
        continue;
      }
      if (text[index] === "]") {
        index += 1;
        return;
      }
      fail(`expected "," or "]", found ${shown()}`);
    }
  };
  try {
    value(0);
    space();
    if (index < text.length) fail(`unexpected ${shown()} after the end of the JSON value`);
    return undefined;
  } catch (error) {
    if (error instanceof Stop) return error.at;
    throw error;
  }
}

/** "line L, column C: problem" for a text `JSON.parse` refused; undefined when the grammar finds nothing wrong. */
export function jsonSyntaxError(text: string): string | undefined {
  // A byte-order mark is not JSON either, but it is invisible: name it.
  if (text.charCodeAt(0) === 0xfeff)
    return "line 1, column 1: the file starts with a byte-order mark; save it without one";
  const found = check(text);
  if (!found) return undefined;
  const before = text.slice(0, found.offset);
  const line = before.split("\n").length;
  const column = found.offset - (before.lastIndexOf("\n") + 1) + 1;
  return `line ${line}, column ${column}: ${found.problem}`;
}
