import { describe, expect, it } from 'vitest';
import { applySgr, paletteColour, parseAnsi, plainText, PLAIN, styleAfter, styleClass, styleColours } from './ansi';

const ESC = '\x1b';

describe('parseAnsi', () => {
  it('keeps plain text as one plain span', () => {
    expect(parseAnsi('hello')).toEqual({ spans: [{ text: 'hello', style: PLAIN }], end: PLAIN });
  });

  it('colours foreground 30-37 and 90-97, and 39 resets it', () => {
    const { spans, end } = parseAnsi(`a${ESC}[31mred${ESC}[92mbright${ESC}[39mplain`);
    expect(spans.map((s) => [s.text, s.style.fg])).toEqual([
      ['a', null],
      ['red', 1],
      ['bright', 10],
      ['plain', null],
    ]);
    expect(end).toBe(PLAIN);
  });

  it('colours background 40-47 and 49 resets it, bold 1 and 22', () => {
    const { spans } = parseAnsi(`${ESC}[1;44mx${ESC}[22my${ESC}[49mz`);
    expect(spans.map((s) => [s.text, s.style.bg, s.style.bold])).toEqual([
      ['x', 4, true],
      ['y', 4, false],
      ['z', null, false],
    ]);
  });

  it('resets on 0 and on an empty SGR', () => {
    expect(parseAnsi(`${ESC}[31mr${ESC}[0mp`).spans[1]!.style).toBe(PLAIN);
    expect(parseAnsi(`${ESC}[31mr${ESC}[mp`).spans[1]!.style).toBe(PLAIN);
  });

  it('carries the style in and out of a line', () => {
    const { spans, end } = parseAnsi(`still red${ESC}[1m`, applySgr(PLAIN, '31'));
    expect(spans[0]!.style.fg).toBe(1);
    expect(end).toEqual({ fg: 1, bg: null, bold: true });
  });

  it('strips cursor moves, erases, OSC titles and other controls', () => {
    const text = `${ESC}[2K${ESC}[1Gdone${ESC}]0;title\x07 ok${ESC}(B\x07\b!${ESC}[?25h`;
    expect(plainText(text)).toBe('done ok!');
  });

  it('reads 256-colour and RGB colours whole, never their parameters as codes', () => {
    // 38;5;1 would read as "bold" and "red" if its parameters were taken one by one.
    const { spans } = parseAnsi(`${ESC}[38;5;200mx${ESC}[38;2;1;2;3my${ESC}[38;5;9mz${ESC}[48;5;232mw`);
    expect(spans.map((s) => [s.text, s.style.fg, s.style.bg, s.style.bold])).toEqual([
      ['x', 200, null, false],
      ['y', '#010203', null, false],
      ['z', 9, null, false],
      ['w', 9, 232, false],
    ]);
    expect(styleColours(spans[0]!.style)).toEqual({ color: paletteColour(200) });
    expect(paletteColour(200)).toBe('#ff00d7');
    expect(paletteColour(16)).toBe('#000000');
    expect(paletteColour(255)).toBe('#eeeeee');
    expect(styleColours(spans[2]!.style)).toBeUndefined();
    expect(styleClass(spans[2]!.style)).toBe('ansi-fg-9');
  });

  it('keeps dim, italic and underline, and ends each with its own code', () => {
    const { spans, end } = parseAnsi(`${ESC}[2;3;4ma${ESC}[24mb${ESC}[23mc${ESC}[22md`);
    expect(spans.map((s) => [s.text, styleClass(s.style)])).toEqual([
      ['a', 'ansi-dim ansi-italic ansi-underline'],
      ['b', 'ansi-dim ansi-italic'],
      ['c', 'ansi-dim'],
      ['d', ''],
    ]);
    expect(end).toBe(PLAIN);
  });

  it('shows what follows a carriage return, and ignores a trailing one', () => {
    expect(plainText('10%\r50%\r100%')).toBe('100%');
    expect(plainText('line\r')).toBe('line');
  });

  it('merges neighbouring pieces of the same style', () => {
    expect(parseAnsi(`a${ESC}[Kb`).spans).toEqual([{ text: 'ab', style: PLAIN }]);
  });

  it('gives the end style without spans', () => {
    expect(styleAfter('no escapes', PLAIN)).toBe(PLAIN);
    expect(styleAfter(`${ESC}[35mx`, PLAIN).fg).toBe(5);
  });

  it('names classes', () => {
    expect(styleClass(PLAIN)).toBe('');
    expect(styleClass({ fg: 1, bg: 12, bold: true })).toBe('ansi-fg-1 ansi-bg-12 ansi-bold');
  });
});

describe('inverse video and colours for the theme', () => {
  const E = '\x1b';
  it('keeps SGR 7 (inverse) until 27 or a reset, and swaps the colours it shows', () => {
    const { spans } = parseAnsi(`${E}[7m${E}[1m${E}[31m FAIL ${E}[39m${E}[22m${E}[27m x ${E}[7m y ${E}[0m z`);
    expect(spans.map((s) => [s.text, styleClass(s.style)])).toEqual([
      [' FAIL ', 'ansi-inverse ansi-inv-bg-1 ansi-bold'],
      [' x ', ''],
      [' y ', 'ansi-inverse'],
      [' z', ''],
    ]);
    // A palette colour inverted: the background is the colour written as the text's.
    const palette = parseAnsi(`${E}[38;5;200;7mp`).spans[0]!.style;
    expect(styleColours(palette)).toEqual({ backgroundColor: paletteColour(200) });
  });

  it('darkens a very light RGB or palette colour on the light theme, lightens a very dark one on the dark, and leaves the rest as written', () => {
    const yellow = parseAnsi(`${E}[38;2;255;255;0my`).spans[0]!.style;
    expect(styleColours(yellow)?.color).toBe('color-mix(in srgb, #ffff00 var(--ansi-keep-light, 100%), #000)');
    const navy = parseAnsi(`${E}[38;5;17mn`).spans[0]!.style;
    expect(styleColours(navy)?.color).toBe(`color-mix(in srgb, ${paletteColour(17)} var(--ansi-keep-dark, 100%), #fff)`);
    const green = parseAnsi(`${E}[38;2;10;200;30mg`).spans[0]!.style;
    expect(styleColours(green)?.color).toBe('#0ac81e');
  });

  it('writes default text on a palette or RGB background in the colour that reads on it, whatever the theme', () => {
    // 48;5;22 (dark green, as delta and difftastic paint added lines): light text, not the light theme's dark one.
    const added = parseAnsi(`${E}[48;5;22m+ line`).spans[0]!.style;
    expect(styleColours(added)).toEqual({ backgroundColor: paletteColour(22), color: '#f2f3f5' });
    // 48;5;229 (pale yellow): dark text, not the dark theme's light one.
    const pale = parseAnsi(`${E}[48;2;255;255;175mx`).spans[0]!.style;
    expect(styleColours(pale)).toEqual({ backgroundColor: '#ffffaf', color: '#1c1d21' });
    // A text colour written with the background is shown as written: the program chose the pair.
    const pair = parseAnsi(`${E}[38;5;226;48;5;22mx`).spans[0]!.style;
    expect(styleColours(pair)).toEqual({ backgroundColor: paletteColour(22), color: paletteColour(226) });
  });
});

describe('OSC 8 hyperlinks', () => {
  const E = '\x1b';
  it('carries the link of an OSC 8 sequence (ESC \\ or BEL) on its text, until the closing one', () => {
    const { spans, end } = parseAnsi(`see ${E}]8;;https://example.com/docs${E}\\the docs${E}]8;;${E}\\ or ${E}]8;id=1;https://x.example/a?b=1${E}\\x${E}]8;;${E}\\`);
    expect(spans.map((s) => [s.text, s.style.link ?? null])).toEqual([
      ['see ', null],
      ['the docs', 'https://example.com/docs'],
      [' or ', null],
      ['x', 'https://x.example/a?b=1'],
    ]);
    expect(end).toBe(PLAIN);
    expect(parseAnsi(`${E}]8;;http://localhost:3000/${'\x07'}app${E}]8;;${'\x07'}`).spans[0]!.style.link).toBe('http://localhost:3000/');
  });

  it('keeps the link through SGR changes and a reset, as a terminal does', () => {
    const { spans } = parseAnsi(`${E}]8;;https://e.example/${E}\\${E}[1mbold${E}[0m plain${E}]8;;${E}\\ out`);
    expect(spans.map((s) => [s.text, s.style.link ?? null, styleClass(s.style)])).toEqual([
      ['bold', 'https://e.example/', 'ansi-bold'],
      [' plain', 'https://e.example/', ''],
      [' out', null, ''],
    ]);
  });

  it('links only http and https: other schemes are shown as plain text', () => {
    for (const uri of ['javascript:alert(1)', 'file:///etc/passwd', 'data:text/html,x']) {
      const { spans } = parseAnsi(`${E}]8;;${uri}${E}\\t${E}]8;;${E}\\`);
      expect(spans).toEqual([{ text: 't', style: PLAIN }]);
    }
  });

  it('carries an open link to the next line (styleAfter)', () => {
    const after = styleAfter(`${E}]8;;https://e.example/${E}\\start`, PLAIN);
    expect(after.link).toBe('https://e.example/');
    expect(styleAfter(`${E}]8;;${E}\\`, after)).toBe(PLAIN);
  });
});
