// Which element scrolls a list: the observer that loads the next page must
// watch that element's edge, not the window's.

/** The nearest ancestor that scrolls vertically, or null for the viewport. */
export function scrollParentOf(element: Element): Element | null {
  for (let node = element.parentElement; node; node = node.parentElement) {
    const { overflowY } = getComputedStyle(node);
    if (overflowY === 'auto' || overflowY === 'scroll' || overflowY === 'overlay') return node;
  }
  return null;
}
