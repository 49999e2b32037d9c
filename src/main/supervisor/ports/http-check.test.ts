// Where an HTTP check reaches a listener: loopback and wildcard addresses at
// their loopback, others as they are.

import { describe, expect, it } from 'vitest';
import { reachableAddress } from './http-check';

describe('reachableAddress', () => {
  it.each([
    ['0.0.0.0', '127.0.0.1'],
    ['::', '::1'],
    ['::0', '::1'],
    ['::ffff:127.0.0.1', '127.0.0.1'],
    ['127.0.0.1', '127.0.0.1'],
    ['10.1.2.3', '10.1.2.3'],
    ['::1', '::1'],
  ])('%s -> %s', (address, reached) => expect(reachableAddress(address)).toBe(reached));
});
