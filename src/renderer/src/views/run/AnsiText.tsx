// A piece of output in its ANSI style (ansi.ts): its classes, its palette or
// RGB colours, and an OSC 8 hyperlink as a link that opens outside the page
// (a new tab in a browser; the desktop app opens https links in the system's
// browser).

import type { ReactNode } from 'react';
import { styleClass, styleColours, type Style } from './ansi';

export function ansiPiece(key: number, text: string, style: Style, extraClass = ''): ReactNode {
  const cls = [styleClass(style), extraClass].filter(Boolean).join(' ');
  const colours = styleColours(style);
  if (style.link) {
    return (
      <a key={key} href={style.link} target="_blank" rel="noopener noreferrer" className={['rd-ansi-link', cls].filter(Boolean).join(' ')} style={colours} title={style.link} data-testid="output-link">
        {text}
      </a>
    );
  }
  return cls || colours ? (
    <span key={key} className={cls || undefined} style={colours}>
      {text}
    </span>
  ) : (
    text
  );
}
