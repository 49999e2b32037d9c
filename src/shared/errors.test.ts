// The error table, both ways: each kind's HTTP status, exit status and MCP
// answer, each status read back to its kind (a host that names no kind), the
// HTTP layer's own refusals, and the brand that makes a WardenError one.

import { describe, expect, it } from 'vitest';
import {
  BOUNDARIES,
  CLI_ERROR_EXIT,
  cliExitOf,
  ERROR_KINDS,
  errorText,
  fromIpcAnswer,
  HTTP_REFUSALS,
  httpStatusOf,
  InputError,
  ipcAnswer,
  isErrorKind,
  isWardenError,
  kindOf,
  kindOfHttpStatus,
  kindOfRefusal,
  WardenError,
  type ErrorKind,
  type HttpRefusal,
} from './errors';

// The contract (docs/architecture.md, "Errors"), written out here rather than read from the table under test.
const KINDS: [kind: ErrorKind, status: number, readBack: ErrorKind][] = [
  ['bad-input', 400, 'bad-input'],
  ['not-found', 404, 'not-found'],
  ['busy', 409, 'busy'],
  // Two kinds share 503: an answer that names no kind reads as "not now".
  ['shutting-down', 503, 'unavailable'],
  ['unavailable', 503, 'unavailable'],
  ['denied', 403, 'denied'],
  ['internal', 500, 'internal'],
];

const REFUSALS: [refusal: HttpRefusal, status: number, kind: ErrorKind][] = [
  ['no-token', 401, 'denied'],
  ['wrong-method', 405, 'bad-input'],
  ['too-large', 413, 'bad-input'],
  ['not-json', 415, 'bad-input'],
];

describe('the kind table', () => {
  it('lists every kind once, and the test lists them all', () => {
    expect([...ERROR_KINDS].sort()).toEqual(KINDS.map(([kind]) => kind).sort());
    expect(Object.keys(BOUNDARIES).sort()).toEqual([...ERROR_KINDS].sort());
    expect(Object.keys(HTTP_REFUSALS).sort()).toEqual(REFUSALS.map(([refusal]) => refusal).sort());
  });

  it.each(KINDS)('%s: HTTP %i, and %i reads back as %s', (kind, status, readBack) => {
    expect(httpStatusOf(kind)).toBe(status);
    expect(BOUNDARIES[kind].httpStatus).toBe(status);
    expect(kindOfHttpStatus(status)).toBe(readBack);
    expect(kindOfRefusal(kind)).toBe(kind);
  });

  it.each(KINDS)('%s: the warden command exits 125, an MCP tool answers isError', (kind) => {
    expect(cliExitOf(kind)).toBe(125);
    expect(CLI_ERROR_EXIT).toBe(125);
    expect(BOUNDARIES[kind].mcpIsError).toBe(true);
  });

  it.each(REFUSALS)("HTTP's own refusal %s: %i, of kind %s, both ways", (refusal, status, kind) => {
    expect(httpStatusOf(refusal)).toBe(status);
    expect(kindOfRefusal(refusal)).toBe(kind);
    expect(kindOfHttpStatus(status)).toBe(kind);
  });

  it('a 403 and a 401 are denied, never bad input (every other 4xx is)', () => {
    expect(kindOfHttpStatus(403)).toBe('denied');
    expect(kindOfHttpStatus(401)).toBe('denied');
    expect(kindOfHttpStatus(404)).toBe('not-found');
    expect(kindOfHttpStatus(409)).toBe('busy');
  });

  it.each([
    [402, 'bad-input'],
    [406, 'bad-input'],
    [418, 'bad-input'],
    [422, 'bad-input'],
    [429, 'bad-input'],
    [499, 'bad-input'],
    [501, 'internal'],
    [502, 'internal'],
    [504, 'internal'],
    [599, 'internal'],
    [600, 'internal'],
    [399, 'internal'],
    [302, 'internal'],
    [200, 'internal'],
    [0, 'internal'],
    [-403, 'internal'],
    [40, 'internal'],
    [4000, 'internal'],
    [Number.NaN, 'internal'],
  ] as const)('a status the tables do not name, %d, reads by its class: %s', (status, kind) => {
    expect(kindOfHttpStatus(status)).toBe(kind);
  });

  it('no two kinds or refusals share a status, but the two "not now" kinds', () => {
    const byStatus = new Map<number, string[]>();
    for (const kind of ERROR_KINDS) byStatus.set(httpStatusOf(kind), [...(byStatus.get(httpStatusOf(kind)) ?? []), kind]);
    for (const refusal of Object.keys(HTTP_REFUSALS) as HttpRefusal[]) byStatus.set(httpStatusOf(refusal), [...(byStatus.get(httpStatusOf(refusal)) ?? []), refusal]);
    expect([...byStatus.values()].filter((names) => names.length > 1)).toEqual([['shutting-down', 'unavailable']]);
  });
});

describe('isErrorKind', () => {
  it.each(ERROR_KINDS)('takes %s', (kind) => {
    expect(isErrorKind(kind)).toBe(true);
  });

  it.each([['Denied'], [''], ['no-token'], ['bad input'], [undefined], [null], [403], [{}], [['denied']]])('refuses %j', (value) => {
    expect(isErrorKind(value)).toBe(false);
  });
});

describe('the brand: what counts as a WardenError', () => {
  it('a WardenError and its subclasses, with their kind', () => {
    const denied = new WardenError('denied', 'No.');
    expect(isWardenError(denied)).toBe(true);
    expect(kindOf(denied)).toBe('denied');
    const input = new InputError('Bad value.');
    expect(isWardenError(input)).toBe(true);
    expect(kindOf(input)).toBe('bad-input');
    expect(input).toBeInstanceOf(WardenError);
    expect(input.name).toBe('InputError');
  });

  it('the brand is no field of its own: its JSON, keys and printed form are as before', () => {
    const error = new WardenError('busy', 'Held.');
    expect(Object.keys(error)).toEqual(['kind', 'name']);
    expect(JSON.stringify(error)).toBe('{"kind":"busy","name":"WardenError"}');
    expect(String(error)).toBe('WardenError: Held.');
  });

  it('an error that only has a kind is not one (any library may give its errors a kind)', () => {
    const lookalike = Object.assign(new Error('From elsewhere.'), { kind: 'denied' });
    expect(isWardenError(lookalike)).toBe(false);
    expect(kindOf(lookalike)).toBe('internal');
    expect(isWardenError({ kind: 'busy', message: 'x' })).toBe(false);
  });

  it('one made by another copy of this module (the hook\'s bundle), or in another realm, is one', async () => {
    // A second instance of the module: its class is another, as in a bundle built on its own.
    const copy = (await import(/* @vite-ignore */ `./errors.ts?copy=${Date.now()}`)) as typeof import('./errors');
    expect(copy.WardenError).not.toBe(WardenError);
    const theirs = new copy.WardenError('not-found', 'No run.');
    expect(theirs).not.toBeInstanceOf(WardenError);
    expect(isWardenError(theirs)).toBe(true);
    expect(kindOf(theirs)).toBe('not-found');
    expect(copy.isWardenError(new WardenError('busy', 'x'))).toBe(true);
    // Another realm's error is no instanceof this realm's Error: the registered symbol still names it.
    const fromRealm = Object.assign(Object.create(null) as object, { [Symbol.for('warden.error')]: true, kind: 'unavailable', message: 'Elsewhere.' });
    expect(fromRealm instanceof Error).toBe(false);
    expect(isWardenError(fromRealm)).toBe(true);
    expect(kindOf(fromRealm)).toBe('unavailable');
  });

  it('a branded error whose kind is not a kind is not one', () => {
    const odd = new WardenError('bogus' as ErrorKind, 'x');
    expect(isWardenError(odd)).toBe(false);
    expect(kindOf(odd)).toBe('internal');
  });

  it.each([[null], [undefined], ['a string'], [42], [new Error('plain')], [new TypeError('type')]])('kindOf(%j) is internal', (value) => {
    expect(kindOf(value)).toBe('internal');
    expect(isWardenError(value)).toBe(false);
  });
});

describe('errorText', () => {
  it('says a WardenError as it is, anything else as Warden\'s own bug', () => {
    expect(errorText(new WardenError('denied', 'Not yours.'), 'internal error: ')).toBe('Not yours.');
    expect(errorText(new Error('boom'), 'internal error: ')).toBe('internal error: boom');
    expect(errorText('plain text', 'Internal error: ')).toBe('Internal error: plain text');
    expect(errorText(undefined, 'x: ')).toBe('x: undefined');
  });
});

describe('IPC answers', () => {
  it('carries a value, or an error by its kind, back to a WardenError of that kind', async () => {
    expect(await ipcAnswer(() => 7)).toEqual({ ok: true, value: 7 });
    expect(await ipcAnswer(async () => 'later')).toEqual({ ok: true, value: 'later' });
    for (const kind of ERROR_KINDS) {
      const answer = await ipcAnswer(() => {
        throw new WardenError(kind, `As ${kind}.`);
      });
      expect(answer).toEqual({ ok: false, kind, error: `As ${kind}.` });
      let thrown: unknown;
      try {
        fromIpcAnswer(answer);
      } catch (error) {
        thrown = error;
      }
      expect(isWardenError(thrown)).toBe(true);
      expect(thrown).toMatchObject({ kind, message: `As ${kind}.` });
    }
    expect(fromIpcAnswer({ ok: true, value: [1, 2] })).toEqual([1, 2]);
  });

  it('says a bug as internal, and refuses an answer that is not one', async () => {
    expect(
      await ipcAnswer(() => {
        throw new RangeError('oops');
      }),
    ).toEqual({ ok: false, kind: 'internal', error: 'Internal error: oops' });
    const refused = (answer: unknown) => {
      try {
        fromIpcAnswer(answer);
      } catch (error) {
        return { kind: (error as WardenError).kind, message: (error as Error).message, branded: isWardenError(error) };
      }
      return null;
    };
    expect(refused({ ok: false, kind: 'bogus', error: 'x' })).toEqual({ kind: 'internal', message: 'x', branded: true });
    for (const answer of [null, undefined, 'ok', {}, { ok: false }, { ok: false, error: 5 }, { ok: 'true', value: 1 }, { error: 'No ok.', kind: 'busy' }, { ok: 'false', error: 'x' }, { ok: 0, error: 'x' }]) {
      expect(refused(answer), JSON.stringify(answer)).toEqual({ kind: 'internal', message: 'The Warden main process answered a call with something that is not an answer.', branded: true });
    }
  });
});
