// A unified diff of two small texts (config files), for `warden setup --dry-run`.

export function lineDiff(before: string, after: string, fromName: string, toName: string, context = 3): string {
  const a = before === '' ? [] : before.replace(/\n$/, '').split('\n');
  const b = after === '' ? [] : after.replace(/\n$/, '').split('\n');
  // Longest common subsequence table (config files are small).
  const lcs: number[][] = Array.from({ length: a.length + 1 }, () => new Array<number>(b.length + 1).fill(0));
  for (let i = a.length - 1; i >= 0; i--) for (let j = b.length - 1; j >= 0; j--) lcs[i]![j] = a[i] === b[j] ? lcs[i + 1]![j + 1]! + 1 : Math.max(lcs[i + 1]![j]!, lcs[i]![j + 1]!);
  const ops: { op: ' ' | '-' | '+'; line: string; ai: number; bi: number }[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    if (i < a.length && j < b.length && a[i] === b[j]) ops.push({ op: ' ', line: a[i]!, ai: i++, bi: j++ });
    else if (j < b.length && (i >= a.length || lcs[i]![j + 1]! >= lcs[i + 1]![j]!)) ops.push({ op: '+', line: b[j]!, ai: i, bi: j++ });
    else ops.push({ op: '-', line: a[i]!, ai: i++, bi: j });
  }
  let out = `--- ${fromName}\n+++ ${toName}\n`;
  let k = 0;
  while (k < ops.length) {
    if (ops[k]!.op === ' ') {
      k++;
      continue;
    }
    let start = Math.max(0, k - context);
    let end = k;
    // Extend the hunk while changes are within 2 * context lines of each other.
    for (let m = k; m < ops.length; m++) {
      if (ops[m]!.op !== ' ') end = m;
      else if (m - end > 2 * context) break;
    }
    end = Math.min(ops.length - 1, end + context);
    const hunk = ops.slice(start, end + 1);
    const aCount = hunk.filter((o) => o.op !== '+').length;
    const bCount = hunk.filter((o) => o.op !== '-').length;
    out += `@@ -${hunk[0]!.ai + (aCount ? 1 : 0)},${aCount} +${hunk[0]!.bi + (bCount ? 1 : 0)},${bCount} @@\n`;
    for (const o of hunk) out += `${o.op}${o.line}\n`;
    k = end + 1;
    start = k;
  }
  return out;
}
