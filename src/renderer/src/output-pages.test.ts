// An ended run's output in pages: what to ask next and what a page adds. The
// store paging a real run of a real host is test/renderer-output-pages.test.ts
// (the renderer's own files may not import Node).

import { describe, expect, it } from 'vitest';
import { addLinkedPage, addPage, NO_PAGES, nextRange, nextRanges, OUTPUT_PAGE_CHARS, pagesDone, pagesProgress, viewText, wholeLines } from './output-pages';

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

describe('a linked line far down, fetched ahead of the pages before it', () => {
  const page = (stream: 'stdout' | 'stderr', offset: number, text: string, total: number, firstLine = 1) => ({ stream, offset, text, total, firstLine });
  // 1000 lines "0001\n" .. "1000\n", 5 characters each.
  const whole = Array.from({ length: 1000 }, (_, i) => `${String(i + 1).padStart(4, '0')}\n`).join('');
  const slice = (from: number, to: number) => whole.slice(from, to);

  it('keeps the page apart, shows the head, pending lines, then the page, each line at its number', () => {
    const held = addPage(NO_PAGES, page('stdout', 0, slice(0, 52), 5000));
    const linked = addLinkedPage(held, page('stdout', 3000, slice(3000, 3100), 5000, 601));
    expect(linked.linked).toMatchObject({ stream: 'stdout', offset: 3000, firstLine: 601, head: slice(0, 52) });
    const shown = viewText(linked, 'stdout');
    const lines = shown.text.split('\n');
    // The head in whole lines (10; the cut "00" of line 11 waits), 590 pending, then lines 601 on.
    expect(lines.slice(0, 10)).toEqual(Array.from({ length: 10 }, (_, i) => String(i + 1).padStart(4, '0')));
    expect(lines[600]).toBe('0601');
    expect(lines[619]).toBe('0620');
    expect(shown.pending).toEqual({ stream: 'stdout', from: 10, to: 600 });
    expect(viewText(linked, 'stderr')).toEqual({ text: '', pending: null });
  });

  it('asks for the pages before it only, a few at once, in order', () => {
    const linked = addLinkedPage(addPage(NO_PAGES, page('stdout', 0, slice(0, 50), 5000)), page('stdout', 3000, slice(3000, 3100), 5000, 601));
    expect(nextRanges(linked, 4, 1000)).toEqual([
      { stream: 'stdout', offset: 50, limit: 1000 },
      { stream: 'stdout', offset: 1050, limit: 1000 },
      { stream: 'stdout', offset: 2050, limit: 950 },
    ]);
    expect(nextRanges(linked, 1, 1000)).toHaveLength(1);
    expect(nextRange(linked, 1000)).toEqual({ stream: 'stdout', offset: 50, limit: 1000 });
  });

  it('joins the held text once it reaches the page, the gap gone, the same lines where they were', () => {
    let paged = addLinkedPage(addPage(NO_PAGES, page('stdout', 0, slice(0, 50), 5000)), page('stdout', 3000, slice(3000, 3100), 5000, 601));
    const before = viewText(paged, 'stdout').text.split('\n');
    paged = addPage(paged, page('stdout', 50, slice(50, 2000), 5000));
    expect(paged.linked).toBeDefined();
    // The view's text does not change while the gap is open (no index built again per page).
    expect(viewText(paged, 'stdout').text).toBe(viewText(addLinkedPage(addPage(NO_PAGES, page('stdout', 0, slice(0, 50), 5000)), page('stdout', 3000, slice(3000, 3100), 5000, 601)), 'stdout').text);
    paged = addPage(paged, page('stdout', 2000, slice(2000, 3000), 5000));
    expect(paged.linked).toBeUndefined();
    expect(paged.stdout).toBe(slice(0, 3100));
    const after = viewText(paged, 'stdout');
    expect(after.pending).toBeNull();
    expect(after.text.split('\n').slice(600, 620)).toEqual(before.slice(600, 620));
    // And on to the end.
    paged = addPage(paged, page('stdout', 3100, slice(3100, 5000), 5000));
    expect(pagesDone(paged)).toBe(true);
    expect(viewText(paged, 'stdout').text).toBe(whole);
  });

  it('drops the page when the held text passed it, and takes a page within the held text as any page', () => {
    const linked = addLinkedPage(addPage(NO_PAGES, page('stdout', 0, slice(0, 50), 5000)), page('stdout', 100, slice(100, 200), 5000, 21));
    const past = addPage(linked, page('stdout', 50, slice(50, 150), 5000));
    expect(past.linked).toBeUndefined();
    expect(past.stdout).toBe(slice(0, 150));
    const near = addLinkedPage(addPage(NO_PAGES, page('stdout', 0, slice(0, 50), 5000)), page('stdout', 25, slice(25, 100), 5000, 6));
    expect(near.linked).toBeUndefined();
    expect(near.stdout).toBe(slice(0, 100));
  });

  it('shows whole lines while a stream is still coming, everything once it is whole', () => {
    expect(wholeLines('a\nb\nc')).toBe('a\nb\n');
    expect(wholeLines('a\nb\n')).toBe('a\nb\n');
    expect(wholeLines('abc')).toBe('');
    expect(wholeLines('')).toBe('');
    expect(viewText({ ...NO_PAGES, stdout: 'a\nb', stdoutTotal: 5 }, 'stdout').text).toBe('a\n');
    expect(viewText({ ...NO_PAGES, stdout: 'a\nb', stdoutTotal: 3 }, 'stdout').text).toBe('a\nb');
  });
});
