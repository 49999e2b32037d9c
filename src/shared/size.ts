// Sizes as people type them, read the same everywhere (`--memory`, the API's
// and MCP's `memory`, settings, the app's forms). K, M, G, T, P, E are powers
// of 1024, as Warden has always read them and as docker does (512M, 2G, 512m,
// 1.5GiB); Kubernetes' binary spelling (Ki, Mi, Gi ... with or without B)
// means the same. A plain number is bytes, with an exponent if wanted (129e6),
// or a B. Kubernetes' decimal quantities (its "1G" is 10^9 bytes) are
// converted where they are read as Kubernetes' (`warden k8s job --memory`), not
// here: a limit a user set as 2G keeps meaning 2 GiB. Exact (no floating
// point): a fraction of a byte is dropped.

export type SizeReading = { ok: true; bytes: number } | { ok: false; why: string };

/** What a size looks like, for the one line that refuses one. */
export const SIZE_FORMS = 'a size such as 512M, 2G or 1.5Gi (K, M, G, T, with or without i or B, are powers of 1024), or a number of bytes';

const POWER: Readonly<Record<string, number>> = { k: 1, m: 2, g: 3, t: 4, p: 5, e: 6 };
const GRAMMAR = /^\s*(\d+)(?:\.(\d+))?(?:e([+-]?\d{1,3}))?\s*(?:([kmgtpe])(i)?(b)?|(b))?\s*$/i;
const FRACTION_ONLY = /^\s*\.(\d+)/;

/** Bytes of a size; why not, as a clause, when it is none. */
export function readSize(text: string): SizeReading {
  // ".5Gi" is a fraction without its 0: read as "0.5Gi".
  const m = GRAMMAR.exec(text.replace(FRACTION_ONLY, ' 0.$1'));
  const [, whole, fraction = '', exponent, letter] = m ?? [];
  const notASize = { ok: false, why: `must be ${SIZE_FORMS}, not ${JSON.stringify(text)}` } as const;
  if (whole === undefined) return notASize;
  // Kubernetes writes a number with an exponent or a suffix, never both ("1e3Mi").
  if (exponent !== undefined && letter !== undefined) return notASize;
  // digits * 10^(exponent - fraction digits) * 1024^power, in integers.
  let scaled = BigInt(whole + fraction);
  const tens = Number(exponent ?? 0) - fraction.length;
  if (letter !== undefined) scaled *= 1024n ** BigInt(POWER[letter.toLowerCase()]!);
  const bytes = tens >= 0 ? scaled * 10n ** BigInt(tens) : scaled / 10n ** BigInt(-tens);
  if (bytes > BigInt(Number.MAX_SAFE_INTEGER)) return { ok: false, why: `must be at most ${Number.MAX_SAFE_INTEGER} bytes (8 PiB), not ${JSON.stringify(text)}` };
  return { ok: true, bytes: Number(bytes) };
}

const WRITTEN: readonly [string, number][] = [
  ['Ei', 1024 ** 6],
  ['Pi', 1024 ** 5],
  ['Ti', 1024 ** 4],
  ['Gi', 1024 ** 3],
  ['Mi', 1024 ** 2],
  ['Ki', 1024],
];
/** The shortest exact text of a size, which readSize reads back: 2147483648 -> "2Gi", 3072 -> "3Ki", 1536 -> "1536". */
export function sizeText(bytes: number): string {
  let best = String(bytes);
  if (!Number.isSafeInteger(bytes) || bytes <= 0) return best;
  for (const [unit, factor] of WRITTEN) {
    const text = `${bytes / factor}${unit}`;
    if (bytes % factor === 0 && text.length < best.length) best = text;
  }
  return best;
}
