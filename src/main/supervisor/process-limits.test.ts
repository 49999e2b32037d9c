// A run keeps its client's umask and resource limits (issue 27, item 4):
// table tests of reading them and of the words that apply them, then a real
// `warden run` from a shell at `umask 077` with its own limits, through a
// host started at umask 022 with others.

import { execa } from 'execa';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseLimits, parseUmask } from '../../shared/limits-text';
import { preludeFor, type HostProcess } from './process-limits';
import { stopBackgroundHosts, WARDEN_BIN } from '../../cli/testkit';

const LIMITS = `Limit                     Soft Limit           Hard Limit           Units
Max cpu time              unlimited            unlimited            seconds
Max stack size            8388608              unlimited            bytes
Max core file size        0                    unlimited            bytes
Max open files            20000                20000                files
Max realtime timeout      unlimited            unlimited            us
`;

describe('parseLimits and parseUmask', () => {
  it('reads each row by its name, unlimited as null; a row that does not read is left out', () => {
    expect(parseLimits(LIMITS)).toEqual({ cpu: [null, null], stack: [8388608, null], core: [0, null], nofile: [20000, 20000], rttime: [null, null] });
    expect(parseLimits('Max open files            lots                 20000                files\n')).toEqual({});
    expect(parseLimits('')).toEqual({});
  });
  it.each([
    ['Name:\tx\nUmask:\t0022\nState:\tR\n', 0o22],
    ['Umask:\t0077\n', 0o77],
    ['Umask:\t0\n', 0],
    ['State:\tR\n', null],
    ['Umask:\t0089\n', null],
  ])('%j is %s', (text, umask) => expect(parseUmask(text)).toBe(umask));
});

describe('preludeFor', () => {
  const host: HostProcess = { limits: { nofile: [20000, 20000], core: [0, null], stack: [8388608, null] }, umask: 0o22, mayRaise: false, prlimit: '/usr/bin/prlimit' };
  it.each<[string, Parameters<typeof preludeFor>[0], Partial<HostProcess>, string[]]>([
    ['nothing asked', {}, {}, []],
    ['the host\'s own umask and limits', { umask: 0o22, rlimits: { nofile: [20000, 20000], core: [0, null] } }, {}, []],
    ['another umask', { umask: 0o77 }, {}, ['/bin/sh', '-c', 'umask 0077 && exec "$@"', 'sh']],
    ['umask 0', { umask: 0 }, {}, ['/bin/sh', '-c', 'umask 0000 && exec "$@"', 'sh']],
    ['an unknown host umask is applied', { umask: 0o22 }, { umask: null }, ['/bin/sh', '-c', 'umask 0022 && exec "$@"', 'sh']],
    ['a lower soft limit', { rlimits: { nofile: [1024, 20000] } }, {}, ['/usr/bin/prlimit', '--nofile=1024:20000', '--']],
    ['a lower hard limit', { rlimits: { nofile: [256, 1024] } }, {}, ['/usr/bin/prlimit', '--nofile=256:1024', '--']],
    ['unlimited made finite', { rlimits: { core: [0, 0] } }, {}, ['/usr/bin/prlimit', '--core=0:0', '--']],
    ['a raised hard limit stays the host\'s when it may not raise', { rlimits: { nofile: [30000, 40000] } }, {}, []],
    ['a raised soft limit under a raised hard one: the soft at the hard', { rlimits: { nofile: [10000, 40000] } }, {}, ['/usr/bin/prlimit', '--nofile=10000:20000', '--']],
    ['root may raise', { rlimits: { nofile: [30000, 40000] } }, { mayRaise: true }, ['/usr/bin/prlimit', '--nofile=30000:40000', '--']],
    ['unlimited asked where the host is finite, not root', { rlimits: { nofile: [null, null] } }, {}, []],
    ['a limit the host does not report is left', { rlimits: { cpu: [10, 10] } }, {}, []],
    ['several, in prlimit\'s order', { rlimits: { stack: [4194304, null], core: [0, 0] } }, {}, ['/usr/bin/prlimit', '--core=0:0', '--stack=4194304:unlimited', '--']],
    ['no prlimit: the limits are not applied, the umask is', { umask: 0o77, rlimits: { core: [0, 0] } }, { prlimit: null }, ['/bin/sh', '-c', 'umask 0077 && exec "$@"', 'sh']],
    ['both', { umask: 0o77, rlimits: { core: [0, 0] } }, {}, ['/bin/sh', '-c', 'umask 0077 && exec "$@"', 'sh', '/usr/bin/prlimit', '--core=0:0', '--']],
  ])('%s', (_name, wanted, over, words) => expect(preludeFor(wanted, { ...host, ...over })).toEqual(words));
});

describe('a run through the host starts with its client\'s umask and limits', () => {
  const dir = mkdtempSync(join(tmpdir(), 'wlimits-'));
  afterAll(async () => {
    await stopBackgroundHosts([join(dir, 'state')]);
    rmSync(dir, { recursive: true, force: true });
  }, 60_000);

  it('a client at umask 077 with 256:1024 open files and a 4 MiB stack: the command has them, the file it writes is 0600', async () => {
    const state = join(dir, 'state');
    // The host starts at umask 022 with this process's limits (a background host, started by a client so set).
    const started = await execa('sh', ['-c', `umask 022; "${process.execPath}" "${WARDEN_BIN}" run -- true`], { env: { WARDEN_STATE_DIR: state, WARDEN_HOST_IDLE: '60s' }, reject: false });
    expect(started.exitCode, started.stderr).toBe(0);
    const file = join(dir, 'token');
    const line = `umask 077; ulimit -Sn 256; ulimit -Hn 1024; ulimit -Ss 4096; "${process.execPath}" "${WARDEN_BIN}" run -- sh -c 'umask; ulimit -Sn; ulimit -Hn; ulimit -Ss; echo secret > "${file}"'; exit $?`;
    const ran = await execa('sh', ['-c', line], { env: { WARDEN_STATE_DIR: state }, reject: false });
    expect(ran.exitCode, ran.stderr).toBe(0);
    expect(ran.stdout.split('\n')).toEqual(['0077', '256', '1024', '4096']);
    expect(statSync(file).mode & 0o777).toBe(0o600);
  }, 60_000);
});
