// The host name a browser reaches a listener at, from the address a run's
// socket listens on: the app's port links and the URL the CLI and MCP
// answers give for a port that answers HTTP.

/** Loopback and wildcards as localhost, an IPv4-mapped address as its IPv4 one, other IPv6 addresses in brackets. */
export function linkHost(address: string): string {
  if (address === '0.0.0.0' || address === '::' || address === '127.0.0.1' || address === '::1' || address === '::ffff:127.0.0.1') return 'localhost';
  if (address.startsWith('::ffff:')) return address.slice(7);
  return address.includes(':') ? `[${address}]` : address;
}
