// Types for scripts/build-cli.mjs (imported by the CLI's tests).
export const CURRENT: string;
export const DIST: string;
export function buildCli(options?: { dist?: boolean }): Promise<{ dir: string; relative: string }>;
