// Web mode only: keeps the tab's title counts and favicon current and sends
// the notifications a person asked for (attention.ts). Renders nothing.

import { useEffect, useRef } from 'react';
import { commandLine } from '../format';
import { useRoute } from '../router';
import { useWarden } from '../store';
import { attentionOf, endedBadly, faviconOf, notificationOf, NOTIFY_KEY, titleWith } from './attention';

export function notificationsOn(): boolean {
  try {
    return globalThis.localStorage?.getItem(NOTIFY_KEY) === 'on' && typeof Notification !== 'undefined' && Notification.permission === 'granted';
  } catch {
    return false;
  }
}

/** Asks the browser once; on a yes, turns them on for this browser. The browser's answer: 'granted', 'denied' (blocked for this site) or 'default' (the question dismissed). */
export async function turnNotificationsOn(): Promise<NotificationPermission> {
  if (typeof Notification === 'undefined') return 'denied';
  const answer = Notification.permission === 'default' ? await Notification.requestPermission() : Notification.permission;
  try {
    if (answer === 'granted') localStorage.setItem(NOTIFY_KEY, 'on');
  } catch {
    // Storage refused: on for this page only.
  }
  return answer;
}

export function turnNotificationsOff(): void {
  try {
    localStorage.removeItem(NOTIFY_KEY);
  } catch {
    // Nothing stored.
  }
}

export function Attention() {
  const runs = useWarden((s) => s.runs);
  const route = useRoute();
  // Failures count from the page's start, and from the last look at Runs or History.
  const seenUntil = useRef(new Date().toISOString());
  const looking = route.view === 'runs' || route.view === 'history';
  if (looking && typeof document !== 'undefined' && !document.hidden) seenUntil.current = new Date().toISOString();
  const attention = attentionOf(Object.values(runs), seenUntil.current);
  const notified = useRef(new Set<string>());

  useEffect(() => {
    const apply = () => {
      document.title = titleWith(document.title, attention);
      let link = document.querySelector<HTMLLinkElement>('link[rel="icon"]');
      if (!link) {
        link = document.createElement('link');
        link.rel = 'icon';
        document.head.appendChild(link);
      }
      const href = faviconOf(attention.state);
      if (link.getAttribute('href') !== href) link.setAttribute('href', href);
      link.dataset.state = attention.state;
    };
    apply();
    // Views set their own titles (useTitle): the counts are put back in front of each.
    const title = document.querySelector('title');
    const observer = title ? new MutationObserver(() => {
      if (document.title !== titleWith(document.title, attention)) apply();
    }) : null;
    if (title) observer!.observe(title, { childList: true, characterData: true, subtree: true });
    return () => observer?.disconnect();
  }, [attention.live, attention.failed, attention.state]);

  // A run that ends badly while the tab is hidden: one notification, if a person asked for them.
  useEffect(() => {
    if (!notificationsOn() || !document.hidden) return;
    for (const run of Object.values(runs)) {
      if (!endedBadly(run) || notified.current.has(run.id) || (run.endedAt ?? '') <= seenUntil.current) continue;
      notified.current.add(run.id);
      const { title, body, tag } = notificationOf(run, commandLine(run) || '(empty script)');
      try {
        const note = new Notification(title, { body, tag });
        note.onclick = () => {
          window.focus();
          location.hash = `#/runs/${run.id}`;
        };
      } catch {
        // A browser that refuses notifications from here: the title and favicon still say it.
      }
    }
  }, [runs]);
  return null;
}
