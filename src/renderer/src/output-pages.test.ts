// An ended run's output in pages: what to ask next and what a page adds. The
// store paging a real run of a real host is test/renderer-output-pages.test.ts
// (the renderer's own files may not import Node).

import { describe, expect, it } from 'vitest';
import { addPage, NO_PAGES, nextRange, OUTPUT_PAGE_CHARS, pagesDone, pagesProgress } from './output-pages';

describe('pages of a run output', () => {
  const page = (stream: 'stdout' | 'stderr', offset: number, text: string, total: number) => ({ stream, offset, text, total });

  it('join in order: a page that starts where its stream ends is added, any other left out', () => {
    let held = addPage(NO_PAGES, page('stdout', 0, 'abc', 9));
    held = addPage(held, page('stderr', 0, 'E', 1));
    expect(held).toMatchObject({ stdout: 'abc', stderr: 'E', stdoutTotal: 9, stderrTotal: 1 });
    // The same page again, or one past a hole: nothing doubled or skipped.
    expect(addPage(held, page('stdout', 0, 'abc', 9))).toBe(held);
    expect(addPage(held, page('stdout', 6, 'ghi', 9))).toBe(held);
    held = addPage(held, page('stdout', 3, 'def', 9));
    expect(pagesDone(held)).toBe(false);
    expect(pagesProgress(held)).toEqual({ held: 7, total: 10 });
    held = addPage(held, page('stdout', 6, 'ghi', 9));
    expect(held.stdout).toBe('abcdefghi');
    expect(pagesDone(held)).toBe(true);
    expect(nextRange(held)).toBeNull();
  });

  it('ask next for the stream held to the smaller share of its length, from where it ends', () => {
    const held = { stdout: 'x'.repeat(100), stderr: 'y'.repeat(10), stdoutTotal: 1000, stderrTotal: 20 };
    expect(nextRange(held, 50)).toEqual({ stream: 'stdout', offset: 100, limit: 50 });
    expect(nextRange({ ...held, stdout: 'x'.repeat(900) }, 50)).toEqual({ stream: 'stderr', offset: 10, limit: 50 });
    expect(nextRange({ ...held, stderr: 'y'.repeat(20) })).toEqual({ stream: 'stdout', offset: 100, limit: OUTPUT_PAGE_CHARS });
    expect(nextRange(NO_PAGES)).toBeNull();
  });
});
