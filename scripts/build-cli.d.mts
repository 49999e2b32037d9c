// Types for scripts/build-cli.mjs (imported by the CLI's tests).
export const CURRENT: string;
export function buildCli(): Promise<{ dir: string; relative: string }>;
