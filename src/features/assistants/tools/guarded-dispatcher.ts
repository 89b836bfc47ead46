import { lookup } from 'node:dns';
import type { LookupFunction } from 'node:net';
import { Agent, type Dispatcher } from 'undici';
import { isBlockedAddress } from '../../../lib/url-guard.ts';

/**
 * Resolves like `dns.lookup` but fails when the host resolves to any private or loopback address. `refuseUrl` checks a
 * URL before the call; this check at connect time also refuses a host that re-resolves to a private address in between
 * (DNS rebinding). IP-literal hosts never reach a lookup; `refuseUrl` has checked them.
 */
const publicOnlyLookup: LookupFunction = (hostname, options, callback) => {
  lookup(hostname, { ...options, all: true }, (error, addresses) => {
    if (error) {
      callback(error, '');
      return;
    }
    const first = addresses[0];
    if (!first || addresses.some((entry) => isBlockedAddress(entry.address))) {
      callback(Object.assign(new Error(`${hostname} resolves to a private or loopback address`), { code: 'EPRIVATEADDRESS' }), '');
      return;
    }
    if (options.all) callback(null, addresses);
    else callback(null, first.address, first.family);
  });
};

let publicOnly: Agent | undefined;
let anyAddress: Agent | undefined;

/** The HTTP dispatcher for user-given URLs (API functions, MCP servers): public addresses only unless private ones are allowed. */
export function guardedDispatcher(allowPrivateUrls: boolean): Dispatcher {
  if (allowPrivateUrls) {
    anyAddress ??= new Agent();
    return anyAddress;
  }
  publicOnly ??= new Agent({ connect: { lookup: publicOnlyLookup } });
  return publicOnly;
}
