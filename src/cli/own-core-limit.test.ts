// A command sent to the host with this shell's core limit: `ulimit -c
// unlimited; warden run ...` dumps a core, as the command run here would.

import { describe, expect, it } from 'vitest';
import { withOwnCoreLimit } from './main';

const limits = (soft: string, hard = 'unlimited') => `Limit                     Soft Limit           Hard Limit           Units\nMax core file size        ${soft}              ${hard}              bytes\n`;

describe("a command sent with this shell's core limit", () => {
  it.each([
    ['0', false],
    ['unlimited', true],
    ['1048576', true],
  ])('soft limit %s: core %s', (soft, core) => {
    const sent = withOwnCoreLimit({ argv: ['true'] }, limits(soft));
    expect('core' in sent && sent.core === true).toBe(core);
  });

  it('keeps what was asked, leaves a script alone, and changes nothing when the limits cannot be read', () => {
    expect(withOwnCoreLimit({ argv: ['true'], core: false }, limits('unlimited'))).toEqual({ argv: ['true'], core: false });
    expect(withOwnCoreLimit({ code: 'x' }, limits('unlimited'))).toEqual({ code: 'x' });
    expect(withOwnCoreLimit({ argv: ['true'] }, null)).toEqual({ argv: ['true'] });
    expect(withOwnCoreLimit({ argv: ['true'] }, 'no such line\n')).toEqual({ argv: ['true'] });
  });
});
