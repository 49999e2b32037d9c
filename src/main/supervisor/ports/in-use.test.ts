import { describe, expect, it } from 'vitest';
import { addressInUse } from './in-use';

describe('addressInUse', () => {
  it.each([
    ['Error: listen EADDRINUSE: address already in use 127.0.0.1:5173', 5173],
    ['Error: listen EADDRINUSE: address already in use :::3000', 3000],
    ['Error: listen EADDRINUSE: address already in use [::1]:8080', 8080],
    ['listen tcp :8080: bind: address already in use', 8080],
    ['listen tcp4 127.0.0.1:9000: bind: address already in use', 9000],
    ['Error: Port 5173 is already in use', 5173],
    ['Address already in use - bind(2) for "127.0.0.1" port 3000 (Errno::EADDRINUSE)', 3000],
    ["ERROR:    [Errno 98] error while attempting to bind on address ('127.0.0.1', 8000): address already in use", 8000],
    ['Something: EADDRINUSE 0.0.0.0:4000 (code)', 4000],
  ])('%s', (line, port) => {
    expect(addressInUse(`starting\n  ${line}  \nbye\n`)).toEqual({ port, line });
  });

  it('says the line when it names no port', () => {
    expect(addressInUse('OSError: [Errno 98] Address already in use\n')).toEqual({ port: null, line: 'OSError: [Errno 98] Address already in use' });
    expect(addressInUse('java.net.BindException: Address already in use')).toEqual({ port: null, line: 'java.net.BindException: Address already in use' });
  });

  it('takes no port out of range, and the first line that says it', () => {
    expect(addressInUse('listen tcp :99999: bind: address already in use')).toEqual({ port: null, line: 'listen tcp :99999: bind: address already in use' });
    expect(addressInUse('Error: Port 3000 is already in use\nError: Port 3001 is already in use')?.port).toBe(3000);
    expect(addressInUse('port 0 is already in use')?.port).toBeNull();
  });

  it('is null for output without it', () => {
    expect(addressInUse('')).toBeNull();
    expect(addressInUse('listening on 3000\nready')).toBeNull();
    expect(addressInUse('the address is in use by nobody')).toBeNull();
  });
});
