/** Public surface of the auth module: keys, tenant tokens, authorization, master key rules. */
export { ACTIONS, expandActions, isAction, isKeysAction, type Action } from './actions.js';
export type { ApiKeyRecord, ApiKeyView } from './api-key.js';
export { AuthEnv, type StoredWebhook } from './auth-env.js';
export {
  AuthController,
  INVALID_API_KEY,
  MISSING_AUTHORIZATION_HEADER,
  MISSING_MASTER_KEY,
  type AuthenticateRequest,
} from './auth-controller.js';
export { Authorization } from './authorization.js';
export { deriveKey } from './key-derivation.js';
export { checkMasterKey, generateMasterKey, MasterKeyError, MASTER_KEY_MIN_BYTES } from './master-key.js';
export { hideSecret, loggableHeaders, redactAuthorizationHeaders } from './redact.js';
export type { Filter, SearchRules, TenantClaims } from './tenant-token.js';
