import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // Records API traffic when WARRANT_RECORD_TRAFFIC names a file (test/unit/openapi-traffic.test.ts).
    setupFiles: ["test/support/record-traffic.ts"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Two cores: integration files spawn servers and databases of their own.
    maxWorkers: 2,
  },
});
