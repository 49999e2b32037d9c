// A guard a view sets while leaving it would drop something (Settings with
// unsaved changes): in-app links and navigate() ask it first, and closing or
// reloading the page asks the browser's own question.

let guard: (() => boolean) | null = null;

/** Sets (or, with null, clears) what is asked before the page leaves the view; it returns true to leave. */
export function setLeaveGuard(ask: (() => boolean) | null): void {
  guard = ask;
}

/** Whether the view may be left now: true when nothing guards it, else the guard's answer. */
export function mayLeave(): boolean {
  return guard === null || guard();
}

/** Whether a guard is set (the page's beforeunload asks the browser to confirm then). */
export function guarded(): boolean {
  return guard !== null;
}

let installed = false;

/** Once per page: in-app hash links and closing or reloading the page go through the guard. */
export function installLeaveGuard(target: Window = window): void {
  if (installed) return;
  installed = true;
  target.document.addEventListener(
    'click',
    (event) => {
      if (guard === null || event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
      const link = event.target instanceof Element ? event.target.closest('a[href^="#"]') : null;
      if (!link || link.getAttribute('href') === target.location.hash) return;
      if (!mayLeave()) {
        event.preventDefault();
        event.stopPropagation();
      } else {
        // Asked once: the view is being left.
        guard = null;
      }
    },
    true,
  );
  target.addEventListener('beforeunload', (event) => {
    if (guard === null) return;
    event.preventDefault();
    event.returnValue = '';
  });
}
