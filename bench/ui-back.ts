// (l) 8. Back to a scrolled list: Runs with 120 ended runs, scrolled 1,500
// px, a run opened, then Back (the hash back to #/runs): from the hash change
// to the first frame painted with the list at 1,500 px again (the rAF after
// it, then a message posted from that frame), timed in the page; and how far
// from 1,500 px it landed. Baseline: the same with the list at its top.
// Alternating rounds. Target (issue 29, item 6): the place kept (0 px off).

import type { Browser, Page } from 'playwright-core';
import { check, median, ms, sleep } from './lib';
import { js } from './ui-page';
import { openPage, pollPage, tid, withHost, type Part, type UiBenchOptions } from './ui';

const RUNS = 120;
const SCROLLED_PX = 1500;

/** Back to #/runs from a run: ms to the frame painted with the pane at `top`, and where it was then (-1: never within the time). */
const BACK = (top: number, timeoutMs: number) => `new Promise((resolve) => {
  const t0 = performance.now();
  location.hash = '#/runs';
  const channel = new MessageChannel();
  const pane = () => document.querySelector('.app-main');
  const done = (at) => resolve({ ms: at - t0, top: pane() ? pane().scrollTop : -1 });
  const look = () => {
    const p = pane();
    const ready = p && document.querySelector('[data-testid="run-row"]') && Math.abs(p.scrollTop - ${top}) < 1;
    if (ready) {
      channel.port1.onmessage = () => done(performance.now());
      requestAnimationFrame(() => channel.port2.postMessage(0));
      return;
    }
    if (performance.now() - t0 > ${timeoutMs}) return resolve({ ms: performance.now() - t0, top: p ? p.scrollTop : -1, missed: true });
    requestAnimationFrame(look);
  };
  requestAnimationFrame(look);
})`;

async function openRunAt(page: Page, top: number, id: string): Promise<void> {
  await page.evaluate(js.hash('#/runs'));
  await pollPage<number>(page, js.count(tid('run-row')), (n) => n >= 50, 'the Runs view listed no 50 rows', 30_000);
  await page.evaluate(`void (document.querySelector('.app-main').scrollTop = ${top})`);
  await pollPage<number>(page, `document.querySelector('.app-main').scrollTop`, (t) => Math.abs(t - top) < 1, `the pane never scrolled to ${top}`, 10_000);
  await sleep(300);
  await page.evaluate(js.hash(`#/runs/${id}`));
  await pollPage<number>(page, js.count(tid('run-detail')), (n) => n > 0, 'the run never opened', 30_000);
  await sleep(300);
}

export async function backToList(browser: Browser, o: UiBenchOptions): Promise<Part> {
  return withHost(null, async (host) => {
    const ids: string[] = [];
    for (let i = 0; i < RUNS; i++) ids.push((await host.api.wait((await host.api.start({ argv: ['true'] })).id)).id);
    const ui = await openPage(browser, host, '#/runs');
    try {
      const figures = { scrolled: [] as { ms: number; top: number; missed?: boolean }[], top: [] as { ms: number; top: number; missed?: boolean }[] };
      for (let round = 0; round < o.navRounds; round++) {
        for (const side of round % 2 === 0 ? (['scrolled', 'top'] as const) : (['top', 'scrolled'] as const)) {
          const top = side === 'scrolled' ? SCROLLED_PX : 0;
          await openRunAt(ui.page, top, ids[round % ids.length]!);
          figures[side].push((await ui.page.evaluate(BACK(top, 5000))) as { ms: number; top: number; missed?: boolean });
        }
      }
      const scrolledMs = median(figures.scrolled.map((f) => f.ms));
      const topMs = median(figures.top.map((f) => f.ms));
      const off = Math.max(...figures.scrolled.map((f) => Math.abs(f.top - SCROLLED_PX)));
      const missed = figures.scrolled.filter((f) => f.missed).length;
      return {
        lines: [
          `8. back to a scrolled list: Runs with ${RUNS} ended runs scrolled ${SCROLLED_PX} px, a run opened, then Back (#/runs): to the frame painted with the list at ${SCROLLED_PX} px again; baseline: the same at the list's top; ${o.navRounds} alternating rounds`,
          `  scrolled: median ${ms(scrolledMs)} [${figures.scrolled.map((f) => f.ms.toFixed(0)).join(', ')}], landed at [${figures.scrolled.map((f) => f.top.toFixed(0)).join(', ')}] px${missed > 0 ? `, ${missed} round(s) NEVER at ${SCROLLED_PX} px within 5 s` : ''}`,
          `  at the top: median ${ms(topMs)} [${figures.top.map((f) => f.ms.toFixed(0)).join(', ')}]; scrolled / top ${(scrolledMs / Math.max(0.1, topMs)).toFixed(2)}x`,
        ],
        checks: [check(`back to Runs scrolled ${SCROLLED_PX} px: the place kept (${off.toFixed(0)} px off at most, ${missed} missed)`, off < 1 && missed === 0)],
      };
    } finally {
      await ui.close();
    }
  });
}
