/** Types of scripts/import-cycles.mjs, for the tests that import it. */
export declare function sourceFiles(root: string): string[];
export declare function importedSpecifiers(text: string): string[];
export declare function importGraph(
  root: string,
  options?: { folders?: boolean },
): { edges: Map<string, Set<string>>; reasons: Map<string, string> };
export declare function stronglyConnected(edges: ReadonlyMap<string, ReadonlySet<string>>): string[][];
export declare function describeCycles(root: string, options?: { folders?: boolean; shown?: number }): string[];
