// (l) 7. Following a log: a page on the output tab of a run printing 25
// lines a second, following its tail, for 10 s with the probe's frame loop off
// (its own cost only): the renderer process's CPU (% of one core, from
// Chromium's own accounting) and the main thread's, layouts and style
// recalculations per second. The same run's Process tree tab, where the
// header's clock once ticked at 10 Hz. Baseline, side by side: the same page
// on the output tab of an ended run (nothing arrives, nothing ticks), before
// and after. Targets (issue 29, item 5): < 10 % of a core and <= 5 layouts/s.

import { join } from 'node:path';
import { writeFileSync } from 'node:fs';
import type { Browser } from 'playwright-core';
import { check, median, sleep } from './lib';
import { js } from './ui-page';
import { LIVE_PRINTER, measureWindow, openPage, pollPage, tid, windowLines, withHost, type Measured, type Part, type UiBenchOptions } from './ui';

const LINES_PER_SECOND = 25;
const WINDOW_S = 10;

export async function followLog(browser: Browser, o: UiBenchOptions, python: string): Promise<Part> {
  return withHost(null, async (host) => {
    const goFile = join(host.stateDir, 'go');
    const stopFile = join(host.stateDir, 'stop');
    const ended = await host.api.wait((await host.api.start({ argv: [python, '-S', '-c', `import sys\nsys.stdout.write("".join(f"{i:08d} line\\n" for i in range(3000)))`] })).id);
    const ui = await openPage(browser, host, `#/runs/${ended.id}/output`);
    try {
      await pollPage<number>(ui.page, js.count(tid('output-line')), (n) => n > 0, 'the ended run showed no output-line', 30_000);
      await sleep(1500);
      await ui.page.evaluate(js.frameLoop(false));
      const window = () => measureWindow(ui, () => sleep(WINDOW_S * 1000));
      const idle: Measured[] = [await window()];

      const live = await host.api.start({ argv: [python, '-S', '-c', LIVE_PRINTER, String(1 / LINES_PER_SECOND), String(o.lineChars), goFile, stopFile, String(LINES_PER_SECOND * 120)] });
      writeFileSync(goFile, '');
      await ui.page.evaluate(js.hash(`#/runs/${live.id}/output`));
      await pollPage<number>(ui.page, js.count(tid('output-line')), (n) => n >= 20, 'the live run showed no 20 output-lines', 30_000);
      await sleep(2000);
      const following = await window();
      const fromBottom = (await ui.page.evaluate(`(() => { const v = document.querySelector('[data-testid="output-view"]'); return v ? v.scrollHeight - v.scrollTop - v.clientHeight : null; })()`)) as number | null;

      await ui.page.evaluate(js.hash(`#/runs/${live.id}/tree`));
      await sleep(2000);
      const tree = await window();

      await ui.page.evaluate(js.hash(`#/runs/${ended.id}/output`));
      writeFileSync(stopFile, '');
      await host.api.wait(live.id);
      await sleep(1500);
      idle.push(await window());

      const cpu = following.rendererCpuPercent;
      const base = median(idle.map((m) => m.rendererCpuPercent));
      return {
        lines: [
          `7. follow: a page on the output tab of a run printing ${LINES_PER_SECOND} lines/s of ${o.lineChars} characters, following its tail, ${WINDOW_S} s windows, the probe's frame loop off; baseline: the output tab of an ended run of 3,000 lines, before and after`,
          ...idle.flatMap((m, i) => windowLines(`ended run's output (${i === 0 ? 'before' : 'after'})  `, m)),
          ...windowLines(`following ${LINES_PER_SECOND} lines/s         `, following),
          `  the view ${fromBottom === null ? 'had no output-view' : `was ${fromBottom.toFixed(0)} px from the bottom`} at the end of the window (following)`,
          ...windowLines(`the same run's tree tab       `, tree),
          `  renderer ${cpu.toFixed(1)}% of a core following vs ${base.toFixed(1)}% idle (${(cpu / Math.max(0.1, base)).toFixed(1)}x); layouts/s ${following.layoutsPerSecond.toFixed(1)} vs ${median(idle.map((m) => m.layoutsPerSecond)).toFixed(1)}; the tree tab ${tree.layoutsPerSecond.toFixed(1)} layouts/s, ${tree.rendererCpuPercent.toFixed(1)}% of a core`,
        ],
        checks: [
          check(`following ${LINES_PER_SECOND} lines/s: renderer ${cpu.toFixed(1)}% of a core < 10%`, cpu < 10),
          check(`following ${LINES_PER_SECOND} lines/s: ${following.layoutsPerSecond.toFixed(1)} layouts/s <= 5`, following.layoutsPerSecond <= 5),
          check(`following ${LINES_PER_SECOND} lines/s: the view at its tail (${fromBottom === null ? 'none' : `${fromBottom.toFixed(0)} px`} from the bottom <= 40)`, fromBottom !== null && fromBottom <= 40),
        ],
      };
    } finally {
      writeFileSync(stopFile, '');
      await ui.close();
    }
  });
}
