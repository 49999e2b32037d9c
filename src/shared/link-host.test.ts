// Where a browser reaches a listener (link-host.ts): the app's port links and
// the CLI's and MCP's URLs say the same.

import { describe, expect, it } from 'vitest';
import { linkHost } from './link-host';

describe('linkHost', () => {
  it.each([
    ['127.0.0.1', 'localhost'],
    ['0.0.0.0', 'localhost'],
    ['::', 'localhost'],
    ['::1', 'localhost'],
    ['::ffff:127.0.0.1', 'localhost'],
    ['::ffff:10.0.0.2', '10.0.0.2'],
    ['10.0.0.2', '10.0.0.2'],
    ['fe80::1', '[fe80::1]'],
  ])('%s', (address, host) => expect(linkHost(address)).toBe(host));
});
