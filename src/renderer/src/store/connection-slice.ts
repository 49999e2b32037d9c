// The API this page talks to: subscribing to its events (applied once per
// frame, events.ts) and taking the runs list once the stream is open, whether
// the host can be reached, and the error a view last reported.

import { UNREACHABLE } from '../web-api';
import { freezeClocks } from './clock';
import { flush } from './events';
import { loadList } from './runs-slice';
import { messageOf, schedule, type ConnectionSlice, type Slice } from './state';

/** How long connect waits for the event stream to say it is open before taking its snapshot anyway (a gap is then fetched). */
const OPEN_WAIT_MS = 2000;

export const createConnectionSlice: Slice<ConnectionSlice> = (store) => {
  const { set, get } = store;
  return {
    api: null,
    error: null,
    connected: false,
    connection: 'online',
    offlineSince: null,

    connect(api) {
      set({ api, connected: true });
      // Subscribe first; the snapshot is taken once the stream is open, and the two meet by offset.
      let markOpen: () => void = () => undefined;
      store.opened = new Promise<void>((resolve) => (markOpen = resolve));
      const fallback = setTimeout(markOpen, OPEN_WAIT_MS);
      const unsubscribe = api.subscribe(
        (event) => {
          store.queue.push(event);
          if (!store.scheduled) {
            store.scheduled = true;
            schedule(() => flush(store));
          }
        },
        {
          onOpen: () => {
            clearTimeout(fallback);
            markOpen();
          },
        },
      );
      // The list at once for the first paint (it holds no output, so nothing is merged onto it), and again
      // once the stream is open: a run that changed between the two answers comes right from the second.
      const listNow = loadList(store, api, true);
      void store.opened.then(async () => {
        await listNow;
        await loadList(store, api, false);
      });
      return () => {
        clearTimeout(fallback);
        unsubscribe();
        set({ connected: false });
      };
    },

    setConnection(connection) {
      const state = get();
      if (state.connection === connection) return;
      const offline = connection !== 'online';
      const frozenAt = offline ? (state.offlineSince ?? performance.now()) : null;
      freezeClocks(frozenAt);
      set({ connection, connected: !offline && state.api !== null, offlineSince: offline ? frozenAt : null });
      // Back: a banner that said the host could not be reached is stale now.
      if (!offline && state.error === UNREACHABLE) set({ error: null });
      // Back: what happened meanwhile comes from the replayed events; the clocks restart from fresh snapshots.
      if (!offline && state.connection !== 'online') void get().resync();
    },

    report(error) {
      set({ error: messageOf(error) });
    },

    dismissError() {
      set({ error: null });
    },
  };
};
