/** Outbound network access under the address policy (`--experimental-allowed-ip-networks`). */
export {
  AddressPolicy,
  InvalidNetworkError,
  OutboundAddressError,
  onOutboundPolicyChange,
  outboundPolicy,
  setOutboundPolicy,
} from './address-policy.js';
export { assertUrlAllowed, guardedLookup, outboundRequest, type OutboundRequestOptions, type OutboundResponse } from './outbound-request.js';
