// Types for scripts/electron-binary.mjs (imported by the e2e specs).
export function electronBinary(): { path: string; missing?: undefined } | { missing: string; path?: undefined };
