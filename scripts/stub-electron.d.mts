export const FUSE_SENTINEL: string;
export const STUB_WIRE: string;
export function electronVersion(): string;
export function stubBinary(): Buffer;
export function writeStubElectron(dir: string, version?: string): string;
