// The control API's route table (host/server.ts CONTROL_ROUTES) and its
// documentation (docs/architecture.md, "The host and its API") say the same:
// every route in the table is documented with its method, every documented
// route is in the table, and every path the clients build (shared/http-api.ts
// ROUTES) is one of them.

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { API_PREFIX, ROUTES } from '../../shared/http-api';
import { CONTROL_ROUTES, matchRoutes, type ControlRoute } from './server';

const DOC = join(__dirname, '../../../docs/architecture.md');

/** The "METHOD /path" pairs of the first route table in a section of the doc (a row "/a/NAME/b, /c" is /a/NAME/b and /a/NAME/c). */
export function documentedRoutes(markdown: string, section: string): string[] {
  const start = `\n${markdown}`.indexOf(`\n## ${section}\n`);
  if (start < 0) throw new Error(`no section "${section}"`);
  const next = markdown.indexOf('\n## ', start);
  const lines = markdown.slice(start, next < 0 ? undefined : next).split('\n');
  const header = lines.findIndex((line) => /^\|\s*route\s*\|\s*method\s*\|/.test(line));
  if (header < 0) throw new Error(`no route table in "${section}"`);
  const out: string[] = [];
  for (const line of lines.slice(header + 2)) {
    if (!line.startsWith('|')) break;
    const [routeCell, methodCell] = line.split('|').slice(1, 3).map((cell) => cell.trim());
    const [first, ...more] = routeCell!.split(',').map((part) => part.trim());
    const paths = [first!, ...more.map((tail) => `${first!.slice(0, first!.lastIndexOf('/'))}${tail}`)];
    for (const method of methodCell!.split(',').map((part) => part.trim())) for (const path of paths) out.push(`${method} ${path}`);
  }
  return out;
}

const tableRoutes = (routes: readonly ControlRoute[]) => routes.map((route) => `${route.method} ${route.path}`);

describe('documentedRoutes reads the doc\'s table', () => {
  const doc = (rows: string) => `# T\n\n## API\n\ntext\n\n| route | method | what |\n|---|---|---|\n${rows}\nafter\n\n## Next\n\n| route | method | what |\n|---|---|---|\n| /elsewhere | GET | x |\n`;
  it.each([
    ['one row', '| /host | GET | who |', ['GET /host']],
    ['two methods', '| /settings | GET, POST | the settings |', ['GET /settings', 'POST /settings']],
    ['a second tail', '| /sessions/NAME/restart, /close | POST | x |', ['POST /sessions/NAME/restart', 'POST /sessions/NAME/close']],
    ['rows in order, up to the table\'s end', '| /a | GET | x \\| y |\n| /b | POST | z |', ['GET /a', 'POST /b']],
  ])('%s', (_what, rows, expected) => {
    expect(documentedRoutes(doc(rows), 'API')).toEqual(expected);
  });

  it('says so when the section or its table is missing', () => {
    expect(() => documentedRoutes(doc('| /a | GET | x |'), 'Nothing')).toThrow(/no section "Nothing"/);
    expect(() => documentedRoutes('## API\n\nno table\n', 'API')).toThrow(/no route table in "API"/);
  });
});

describe('the control API and docs/architecture.md agree', () => {
  const documented = documentedRoutes(readFileSync(DOC, 'utf8'), 'The host and its API');
  const table = tableRoutes(CONTROL_ROUTES);

  it('documents every route of the table, with its method', () => {
    expect(table.filter((route) => !documented.includes(route))).toEqual([]);
  });

  it('has every documented route in the table', () => {
    expect(documented.filter((route) => !table.includes(route))).toEqual([]);
  });

  it('documents each route once, and the table holds each once', () => {
    expect(new Set(documented).size).toBe(documented.length);
    expect(new Set(table).size).toBe(table.length);
  });

  it('answers every path the clients build (shared/http-api.ts ROUTES)', () => {
    const built = Object.entries(ROUTES).map(([name, route]) => [name, typeof route === 'function' ? route(name.endsWith('Session') ? 'py' : 'abc123') : route] as const);
    for (const [name, path] of built) expect(matchRoutes(CONTROL_ROUTES, path).routes, `${name}: ${path}`).not.toEqual([]);
  });
});

describe('matchRoutes', () => {
  const routes: ControlRoute[] = [
    { method: 'GET', path: '/runs', handle: () => undefined },
    { method: 'POST', path: '/runs', handle: () => undefined },
    { method: 'GET', path: '/runs/ID', handle: () => undefined },
    { method: 'POST', path: '/runs/ID/stop', handle: () => undefined },
    { method: 'POST', path: '/sessions/NAME/close', handle: () => undefined },
  ];
  it.each([
    [`${API_PREFIX}/runs`, ['GET /runs', 'POST /runs'], { id: '', name: '' }],
    [`${API_PREFIX}/runs/abc123`, ['GET /runs/ID'], { id: 'abc123', name: '' }],
    [`${API_PREFIX}/runs/abc123/stop`, ['POST /runs/ID/stop'], { id: 'abc123', name: '' }],
    [`${API_PREFIX}/sessions/py%20x/close`, ['POST /sessions/NAME/close'], { id: '', name: 'py%20x' }],
    [`${API_PREFIX}/runs/`, [], null],
    [`${API_PREFIX}/runs//stop`, [], null],
    [`${API_PREFIX}/runs/abc123/stop/more`, [], null],
    [`${API_PREFIX}/runs/abc123/wait`, [], null],
    [`${API_PREFIX}`, [], null],
    ['/runs', [], null],
    [`/api/v2/runs`, [], null],
    [`${API_PREFIX}/runsx`, [], null],
  ])('%s', (path, expected, params) => {
    const found = matchRoutes(routes, path);
    expect(tableRoutes(found.routes)).toEqual(expected);
    if (params) expect(found.params).toEqual(params);
  });
});
