// The TCP table's rows to listening sockets: each field's branch, and both
// byte orders.

import { describe, expect, it } from 'vitest';
import { formatAddress, formatIpv6, parseListening } from './proc-net';

const HEADER4 = '  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n';
const row4 = (sl: number, local: string, st: string, inode: string, remote = '00000000:0000') =>
  `   ${sl}: ${local} ${remote} ${st} 00000000:00000000 00:00000000 00000000  1000        0 ${inode} 1 0000000000000000 100 0 0 10 0\n`;

describe('parseListening', () => {
  it('keeps the LISTEN rows with their address, port and inode', () => {
    const text =
      HEADER4 +
      row4(0, '0100007F:1435', '0A', '4242') + // 127.0.0.1:5173
      row4(1, '00000000:1F90', '0A', '77') + // 0.0.0.0:8080
      row4(2, '0100007F:1435', '01', '99', '0100007F:C350') + // an established connection
      row4(3, '0100007F:0050', '06', '0') + // TIME_WAIT, no inode
      row4(4, '0100007F:0051', '0A', '0'); // LISTEN without an inode (closing)
    expect(parseListening(text, true)).toEqual([
      { inode: 4242, port: 5173, address: '127.0.0.1' },
      { inode: 77, port: 8080, address: '0.0.0.0' },
    ]);
  });

  it('reads IPv6 rows (tcp6), in either byte order', () => {
    const header = '  sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n';
    const loopback = '00000000000000000000000001000000';
    const any = '00000000000000000000000000000000';
    const mapped = '0000000000000000FFFF00000100007F';
    const rows = [
      `   0: ${loopback}:1435 ${any}:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 11 1 0 100 0 0 10 0\n`,
      `   1: ${any}:0016 ${any}:0000 0A 00000000:00000000 00:00000000 00000000     0        0 12 1 0 100 0 0 10 0\n`,
      `   2: ${mapped}:0BB8 ${any}:0000 0A 00000000:00000000 00:00000000 00000000     0        0 13 1 0 100 0 0 10 0\n`,
    ].join('');
    expect(parseListening(header + rows, true)).toEqual([
      { inode: 11, port: 5173, address: '::1' },
      { inode: 12, port: 22, address: '::' },
      { inode: 13, port: 3000, address: '::ffff:127.0.0.1' },
    ]);
    const bigEndianLoopback = '00000000000000000000000000000001';
    expect(parseListening(`${header}   0: ${bigEndianLoopback}:1435 ${any}:0000 0A 0:0 0:0 0 0 0 21 1\n`, false)).toEqual([{ inode: 21, port: 5173, address: '::1' }]);
  });

  it('reads a big-endian IPv4 address as written', () => {
    expect(parseListening(HEADER4 + row4(0, '7F000001:0016', '0A', '5'), false)).toEqual([{ inode: 5, port: 22, address: '127.0.0.1' }]);
  });

  it('skips what does not parse, and text without a header or rows', () => {
    expect(parseListening('', true)).toEqual([]);
    expect(parseListening(HEADER4.trimEnd(), true)).toEqual([]);
    expect(parseListening(HEADER4, true)).toEqual([]);
    const bad = [
      '   0: 0100007F 00000000:0000 0A 0:0 0:0 0 0 0 7 1\n', // no port
      '   0: 0100007F:XYZW 00000000:0000 0A 0:0 0:0 0 0 0 7 1\n', // port not hex
      '   0: 0100007F:0000 00000000:0000 0A 0:0 0:0 0 0 0 7 1\n', // port 0
      '   0: 0100007:0050 00000000:0000 0A 0:0 0:0 0 0 0 7 1\n', // address of 7 digits
      '   0: 0100007G:0050 00000000:0000 0A 0:0 0:0 0 0 0 7 1\n', // address not hex
      '   0: 0100007F00:0050 00000000:0000 0A 0:0 0:0 0 0 0 7 1\n', // 10 digits
      '   0: 0100007F:0050 00000000:0000 0A 0:0 0:0 0 0 0 x7 1\n', // inode not a number
      '   0: 0100007F:0050 00000000:0000 0A 0:0 0:0 0 0 0\n', // too few fields
      '   0: 0100007F:0050 0A 01 0 0A 0 0 0 7 1\n', // 0A in other columns only
    ].join('');
    expect(parseListening(HEADER4 + bad, true)).toEqual([]);
  });

  it('takes the last row without a newline', () => {
    expect(parseListening(HEADER4 + row4(0, '0100007F:0050', '0A', '8').trimEnd(), true)).toEqual([{ inode: 8, port: 80, address: '127.0.0.1' }]);
  });
});

describe('formatIpv6', () => {
  const bytes = (...groups: number[]) => groups.flatMap((g) => [g >> 8, g & 0xff]);
  it.each([
    [bytes(0, 0, 0, 0, 0, 0, 0, 0), '::'],
    [bytes(0, 0, 0, 0, 0, 0, 0, 1), '::1'],
    [bytes(0xfe80, 0, 0, 0, 0x1, 0x2, 0x3, 0x4), 'fe80::1:2:3:4'],
    [bytes(0x2001, 0xdb8, 0, 0, 1, 0, 0, 1), '2001:db8::1:0:0:1'],
    [bytes(0x2001, 0xdb8, 1, 2, 3, 4, 5, 6), '2001:db8:1:2:3:4:5:6'],
    [bytes(0x2001, 0, 1, 2, 3, 4, 5, 6), '2001:0:1:2:3:4:5:6'],
    [bytes(1, 0, 0, 2, 0, 0, 0, 3), '1:0:0:2::3'],
    [bytes(1, 2, 3, 4, 5, 6, 7, 0), '1:2:3:4:5:6:7:0'],
    [bytes(1, 0, 0, 0, 0, 0, 0, 0), '1::'],
    [[0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 0, 0, 7], '::ffff:10.0.0.7'],
    [[0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0, 10, 0, 0, 7], '::ff00:a00:7'],
    [[0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0xff, 0xff, 10, 0, 0, 7], '::1:ffff:a00:7'],
  ])('%j -> %s', (input, text) => expect(formatIpv6(input)).toBe(text));
});

describe('formatAddress', () => {
  it.each([
    ['0100007F', true, '127.0.0.1'],
    ['7F000001', false, '127.0.0.1'],
    ['00000000', true, '0.0.0.0'],
    ['0', true, null],
    ['', true, null],
    ['0100007F0100007F', true, null],
    ['ZZ00007F', true, null],
  ] as const)('%s (little-endian %s)', (hex, little, text) => expect(formatAddress(hex, little)).toBe(text));
});
