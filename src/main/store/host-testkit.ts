// A host or a recoverer in a process of its own, for the store's tests
// (store-testkit.ts starts it). Each mode prints JSON lines on stdout.
//
//   host DIR SPEC_JSON...   record runs of these argv (or {code} scripts), print {hostId, pid, runs}
//                           once each run's stdout holds "ready", then idle until killed
//   recover DIR TEARDOWN BARRIER
//                           register a new host, print {ready}, wait for the file
//                           BARRIER, recover, print the report, exit
//   open DIR [FILE]         open the store, print {ok} or {error, problem}

import { existsSync } from 'node:fs';
import { startSentinel } from '../host/sentinel';
import { newId, Supervisor } from '../supervisor/supervisor';
import { attachRecorder } from './recorder';
import { openStore } from './store';
import { StoreOpenError } from './errors';

const [mode, dir, ...rest] = process.argv.slice(2);
const print = (value: unknown) => process.stdout.write(`${JSON.stringify(value)}\n`);

if (mode === 'host') {
  const store = openStore({ dir: dir! });
  // With WARDEN_WITH_SENTINEL=1, as a real host: its runs end when it dies (bench/faults.ts).
  const hostId = newId();
  const watch = process.env.WARDEN_WITH_SENTINEL === '1' ? startSentinel(hostId) : undefined;
  const supervisor = new Supervisor({ hostId, ...(watch ? { watch } : {}) });
  const recorder = attachRecorder(store, supervisor);
  // An array is a command's argv; an object with code is a Python script.
  const runs = rest.map((spec) => {
    const parsed = JSON.parse(spec) as string[] | { code: string };
    return supervisor.start(Array.isArray(parsed) ? { argv: parsed } : parsed).id;
  });
  const timer = setInterval(() => {
    recorder.flush();
    if (runs.every((id) => store.get(id)?.stdout.includes('ready'))) {
      clearInterval(timer);
      print({ hostId: supervisor.hostId, pid: process.pid, runs });
      setInterval(() => undefined, 1000);
    }
  }, 20);
} else if (mode === 'recover') {
  const [tearDown, barrier] = rest;
  const store = openStore({ dir: dir! });
  const hostId = new Supervisor().hostId;
  store.registerHost(hostId);
  print({ ready: true, hostId });
  while (!existsSync(barrier!)) await new Promise((resolve) => setTimeout(resolve, 1));
  const report = await store.recoverLostRuns({ tearDown: tearDown === 'true' });
  print({ hostId, recovered: report.recovered.map((r) => r.id), liveElsewhere: report.liveElsewhere });
  store.close();
} else if (mode === 'open') {
  try {
    const store = openStore({ dir: dir!, ...(rest[0] ? { fileName: rest[0] } : {}) });
    store.close();
    print({ ok: true });
  } catch (error) {
    print({ error: (error as Error).message, problem: error instanceof StoreOpenError ? error.problem : null });
  }
} else {
  process.stderr.write(`unknown mode ${mode}\n`);
  process.exit(2);
}
