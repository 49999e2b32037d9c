// Which stream the output tab should open on when another tab sent the reader
// there ("open all of stderr" in the summary). Taken once, by the next output
// view of that run.

let intent: { id: string; stream: 'stdout' | 'stderr' } | null = null;

export function askStream(id: string, stream: 'stdout' | 'stderr'): void {
  intent = { id, stream };
}

export function takeStream(id: string): 'stdout' | 'stderr' | null {
  if (!intent || intent.id !== id) return null;
  const { stream } = intent;
  intent = null;
  return stream;
}
