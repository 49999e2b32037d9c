import { constants } from 'node:os';

const byNumber = new Map<number, string>();
for (const [name, num] of Object.entries(constants.signals)) {
  // SIGIOT and SIGPOLL share numbers with SIGABRT and SIGIO; keep the usual names.
  if (!byNumber.has(num) || name === 'SIGABRT' || name === 'SIGIO') byNumber.set(num, name);
}

export function signalName(num: number): string | undefined {
  return byNumber.get(num);
}

export function signalNumber(name: string): number | undefined {
  return (constants.signals as Record<string, number>)[name];
}
