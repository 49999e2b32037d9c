// (l) 9. A deep link into a big ended log: a fresh page (a new document) on
// #/runs/ID/output/L150000 of a run that printed 190,000 lines of 50
// characters (9.5 MB, kept whole with --output-cap 10000000): from the start
// of the navigation to the frame painted with line 150,000 shown (a
// MutationObserver in the page, then the rAF after it and a message posted
// from that frame), and the API bytes received by then. Baseline: the same
// link to line 100 (the first page). Alternating rounds. Target (issue 29,
// item 7): <= 1 s.

import type { Browser, Page } from 'playwright-core';
import { check, median, ms, sleep } from './lib';
import { openPage, withHost, type Part, type UiBenchOptions } from './ui';

const LINES = 190_000;
const FAR = 150_000;
const NEAR = 100;

/** Before the app's scripts: when a linked output-line first shows, the time of the frame that paints it and the API bytes by then. */
const WATCH = `(() => {
  const look = () => {
    const row = document.querySelector('[data-testid="output-line"][data-linked="true"]');
    if (!row || window.__linked) return;
    const apiBytes = performance.getEntriesByType('resource').filter((e) => e.name.includes('/api/v1/')).reduce((n, e) => n + e.encodedBodySize, 0);
    window.__linked = { dom: performance.now(), apiBytes };
    const channel = new MessageChannel();
    channel.port1.onmessage = () => { window.__linked.painted = performance.now(); };
    requestAnimationFrame(() => channel.port2.postMessage(0));
    observer.disconnect();
  };
  const observer = new MutationObserver(look);
  document.addEventListener('DOMContentLoaded', () => observer.observe(document.body, { childList: true, subtree: true }));
})()`;

interface Landing {
  painted: number;
  dom: number;
  apiBytes: number;
}

async function land(page: Page, url: string): Promise<Landing> {
  await page.goto('about:blank');
  await page.goto(url);
  const deadline = performance.now() + 60_000;
  for (;;) {
    const seen = (await page.evaluate('window.__linked')) as Landing | undefined;
    if (seen?.painted !== undefined) return seen;
    if (performance.now() > deadline) throw new Error(`the linked line never showed at ${url}`);
    await sleep(50);
  }
}

export async function deepLink(browser: Browser, o: UiBenchOptions, python: string): Promise<Part> {
  return withHost(null, async (host) => {
    const script = `import sys\nw = sys.stdout.write\nfor i in range(1, ${LINES + 1}):\n    w(f"{i:06d} " + "x" * 42 + "\\n")\n`;
    const run = await host.api.wait((await host.api.start({ argv: [python, '-S', '-c', script], outputCapChars: 10_000_000 })).id);
    if (run.stdout.length !== LINES * 50) throw new Error(`the run kept ${run.stdout.length} characters, not ${LINES * 50}`);
    const ui = await openPage(browser, host, '#/runs');
    await ui.page.addInitScript(WATCH);
    const base = new URL(host.loginUrl()!).origin;
    try {
      const far: Landing[] = [];
      const near: Landing[] = [];
      for (let round = 0; round < o.navRounds; round++) {
        for (const side of round % 2 === 0 ? (['far', 'near'] as const) : (['near', 'far'] as const)) {
          const line = side === 'far' ? FAR : NEAR;
          (side === 'far' ? far : near).push(await land(ui.page, `${base}/#/runs/${run.id}/output/L${line}`));
        }
      }
      const farMs = median(far.map((l) => l.painted));
      const nearMs = median(near.map((l) => l.painted));
      return {
        lines: [
          `9. deep link: a fresh page on line ${FAR.toLocaleString('en-US')} of an ended run of ${LINES.toLocaleString('en-US')} lines of 50 characters (${((LINES * 50) / 1e6).toFixed(1)} MB kept whole), from the navigation to the frame painted with it; baseline: line ${NEAR} (the first page); ${o.navRounds} alternating rounds`,
          `  line ${FAR.toLocaleString('en-US')}: median ${ms(farMs)} [${far.map((l) => l.painted.toFixed(0)).join(', ')}], in the DOM median ${ms(median(far.map((l) => l.dom)))}, API answers by then median ${(median(far.map((l) => l.apiBytes)) / 1e6).toFixed(2)} MB`,
          `  line ${NEAR}: median ${ms(nearMs)} [${near.map((l) => l.painted.toFixed(0)).join(', ')}], API answers by then median ${(median(near.map((l) => l.apiBytes)) / 1e6).toFixed(2)} MB; line ${FAR.toLocaleString('en-US')} / line ${NEAR} ${(farMs / Math.max(1, nearMs)).toFixed(2)}x`,
        ],
        checks: [check(`deep link to line ${FAR.toLocaleString('en-US')} of 9.5 MB painted in ${ms(farMs)} (median) <= 1 s`, farMs <= 1000)],
      };
    } finally {
      await ui.close();
    }
  });
}
