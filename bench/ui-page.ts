// (l) The probe bench/ui.ts installs in the page (page.addInitScript, before the
// app loads) and the calls it makes into it. Plain JavaScript in strings: a
// function passed through tsx/esbuild may carry helpers (__name) that do not
// exist in the page.
//
// window.__wb:
//   start()                 begins a window: requestAnimationFrame timestamps from now on
//   stop()                  ends it: frame deltas, long tasks overlapping it, JS heap
//   timeNav(hash, sel, ms)  performance.now(), sets location.hash, waits for the first
//                           element matching sel (MutationObserver), then a
//                           requestAnimationFrame and a message posted from it (runs
//                           after that frame is painted): times from the hash change
//   count(sel)              elements matching sel now
//   frameLoop(on)           stops (false) or restarts the probe's own requestAnimationFrame
//                           loop, so an idle page's cost is measured without it
//
// EventSource is wrapped to count the messages the page receives.
//
// Long tasks come from a PerformanceObserver('longtask') made before the app's
// scripts run, so none of the app's own start-up is missed.

export const PAGE_PROBE = String.raw`(() => {
  if (window.__wb) return;
  const longtasks = [];
  let longtaskSupported = true;
  try {
    new PerformanceObserver((list) => {
      for (const e of list.getEntries()) longtasks.push([e.startTime, e.duration]);
    }).observe({ type: 'longtask', buffered: true });
  } catch (e) {
    longtaskSupported = false;
  }
  // Server-sent messages the page receives (each one a task on the main thread).
  let messages = 0;
  const Native = window.EventSource;
  if (Native) {
    window.EventSource = class extends Native {
      constructor(url, init) {
        super(url, init);
        this.addEventListener('message', () => { messages++; });
      }
    };
  }
  let frames = null;
  let t0 = 0;
  let messagesAt0 = 0;
  let looping = true;
  const loop = (t) => {
    if (frames) frames.push(t);
    if (looping) requestAnimationFrame(loop);
    else loopScheduled = false;
  };
  let loopScheduled = true;
  requestAnimationFrame(loop);
  const tasksIn = (from, to) => longtasks.filter(([s, d]) => s + d > from && s < to);
  window.__wb = {
    start() {
      frames = [];
      t0 = performance.now();
      messagesAt0 = messages;
    },
    stop() {
      const t1 = performance.now();
      const f = frames || [];
      frames = null;
      const deltas = [];
      for (let i = 1; i < f.length; i++) deltas.push(f[i] - f[i - 1]);
      let under = 0, underMs = 0, maxFrame = 0;
      for (const d of deltas) {
        if (d < 50) { under++; underMs += d; }
        if (d > maxFrame) maxFrame = d;
      }
      const tasks = tasksIn(t0, t1);
      deltas.sort((a, b) => a - b);
      return {
        wallMs: t1 - t0,
        frames: deltas.length,
        under50: under,
        under50Ms: underMs,
        framedMs: f.length > 1 ? f[f.length - 1] - f[0] : 0,
        medianFrameMs: deltas.length ? deltas[deltas.length >> 1] : NaN,
        p99FrameMs: deltas.length ? deltas[Math.min(deltas.length - 1, Math.ceil(0.99 * deltas.length) - 1)] : NaN,
        maxFrameMs: maxFrame,
        longtaskSupported,
        longtasks: tasks.length,
        longestTaskMs: tasks.reduce((m, [, d]) => Math.max(m, d), 0),
        longtaskTotalMs: tasks.reduce((s, [, d]) => s + d, 0),
        heapUsed: performance.memory ? performance.memory.usedJSHeapSize : null,
        messages: messages - messagesAt0,
      };
    },
    timeNav(hash, selector, timeoutMs) {
      return new Promise((resolve, reject) => {
        let done = false;
        let observer = null;
        let timer = 0;
        const t = performance.now();
        const check = () => {
          if (done) return;
          const el = document.querySelector(selector);
          if (!el) return;
          done = true;
          observer.disconnect();
          clearTimeout(timer);
          const domMs = performance.now() - t;
          requestAnimationFrame(() => {
            const rafMs = performance.now() - t;
            const channel = new MessageChannel();
            channel.port1.onmessage = () => {
              const paintMs = performance.now() - t;
              const tasks = tasksIn(t, t + paintMs);
              resolve({
                domMs,
                rafMs,
                paintMs,
                count: document.querySelectorAll(selector).length,
                text: (el.textContent || '').slice(0, 120),
                longestTaskMs: tasks.reduce((m, [, d]) => Math.max(m, d), 0),
                nodes: document.getElementsByTagName('*').length,
              });
            };
            channel.port2.postMessage(0);
          });
        };
        observer = new MutationObserver(check);
        observer.observe(document.documentElement, { childList: true, subtree: true });
        timer = setTimeout(() => {
          if (done) return;
          done = true;
          observer.disconnect();
          reject(new Error('no ' + selector + ' within ' + timeoutMs + ' ms of setting ' + hash));
        }, timeoutMs);
        location.hash = hash;
        check();
      });
    },
    frameLoop(on) {
      looping = on;
      if (on && !loopScheduled) {
        loopScheduled = true;
        requestAnimationFrame(loop);
      }
    },
    count(selector) {
      return document.querySelectorAll(selector).length;
    },
  };
})();`;

export interface WindowFigures {
  wallMs: number;
  /** Frame deltas (consecutive requestAnimationFrame timestamps). */
  frames: number;
  under50: number;
  under50Ms: number;
  /** From the first to the last frame of the window. */
  framedMs: number;
  medianFrameMs: number;
  p99FrameMs: number;
  maxFrameMs: number;
  longtaskSupported: boolean;
  longtasks: number;
  longestTaskMs: number;
  longtaskTotalMs: number;
  heapUsed: number | null;
  /** Server-sent event messages received in the window. */
  messages: number;
}

export interface NavFigures {
  /** The first matching element is in the DOM (MutationObserver). */
  domMs: number;
  /** The requestAnimationFrame after it. */
  rafMs: number;
  /** A message posted from that frame arrived: the frame was painted. */
  paintMs: number;
  /** Matching elements at that point. */
  count: number;
  text: string;
  longestTaskMs: number;
  /** Elements in the document at that point. */
  nodes: number;
}

export const js = {
  start: 'window.__wb.start()',
  stop: 'window.__wb.stop()',
  frameLoop: (on: boolean) => `window.__wb.frameLoop(${on})`,
  count: (selector: string) => `window.__wb.count(${JSON.stringify(selector)})`,
  timeNav: (hash: string, selector: string, timeoutMs: number) => `window.__wb.timeNav(${JSON.stringify(hash)}, ${JSON.stringify(selector)}, ${timeoutMs})`,
  hash: (hash: string) => `void (location.hash = ${JSON.stringify(hash)})`,
};
